import DockJSON
import StandEngine

extension RPCError {
    /// The engine's refusals as the API's DockKit-like codes.
    init(_ error: EngineError) {
        switch error {
        case .notConnected(let stand): self = .notConnected(stand)
        case .notSupported: self = RPCError(code: -32002, message: error.description)
        case .invalidParameter: self = RPCError(code: -32003, message: error.description)
        case .frameRateTooHigh: self = RPCError(code: -32004, message: error.description)
        case .frameRateTooLow: self = RPCError(code: -32005, message: error.description)
        case .noSubjectFound: self = .noSubjectFound
        case .busy(let holder, let stand):
            self = RPCError(code: -32008, message: error.description,
                            data: ["stand": JSONValue(stand), "holder_client": JSONValue(holder.id), "holder_pid": holder.pid.map { JSONValue($0) } ?? .null])
        case .motionFailed: self = RPCError(code: -32009, message: error.description)
        case .cameraRefused: self = RPCError(code: -32009, message: error.description)
        case .stopped(let by, let stand):
            self = RPCError(code: -32009, message: error.description,
                            data: ["stand": JSONValue(stand), "stopped_by_client": by.map { JSONValue($0.id) } ?? .null,
                                   "stopped_by_pid": by?.pid.map { JSONValue($0) } ?? .null])
        }
    }
}

extension RPCError {
    /// Whatever a stand's future failed with, as the reply's error.
    init(any error: any Error) {
        switch error {
        case let e as RPCError: self = e
        case let e as EngineError: self = RPCError(e)
        default: self = .internal("\(error)")
        }
    }
}
