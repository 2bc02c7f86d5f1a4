/// One VISCA message the driver sends, and why.
struct VISCAMessage: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        /// Handshake (serial): AddressSet, broadcast.
        case addressSet
        /// Handshake (VISCA-over-IP): the control command RESET of the sequence number.
        case resetSequence
        /// IF_Clear. `urgent`: the fallback that lets a Stop through a full command buffer.
        case ifClear(urgent: Bool)
        /// Pan-tiltDrive Stop. `setup`: the one sent on every connect.
        case stop(setup: Bool)
        case drive
        case move
        case limit
        case poll
        /// CAM_Zoom Tele/Wide variable, or its Stop for a zero rate.
        case zoomDrive
        /// CAM_Zoom Direct.
        case zoomMove
        /// CAM_Zoom Stop asked for by a STOP: sent ahead of everything, as the Pan-tiltDrive Stop.
        case zoomStop
        /// CAM_ZoomPosInq.
        case zoomPoll
        /// CAM_Memory Set or Reset asked for by this `cameraPreset` request (its outcome is reported).
        case memory(CameraPresetRequest)
    }

    var kind: Kind
    var payload: [UInt8]
    /// The dockd message type a refusal is reported under (velocity, position, stop, limits).
    var command: UInt8

    var isSetup: Bool {
        switch kind {
        case .addressSet, .resetSequence, .ifClear(urgent: false), .stop(setup: true): true
        default: false
        }
    }

    /// Sent ahead of everything, in the camera's second socket if need be.
    var isUrgent: Bool {
        switch kind {
        case .ifClear(urgent: true), .stop(setup: false), .zoomStop: true
        default: false
        }
    }

    var isStop: Bool { if case .stop = kind { true } else { false } }
    var isInquiry: Bool { kind == .poll || kind == .zoomPoll }
    var memoryRequest: CameraPresetRequest? { if case .memory(let request) = kind { request } else { nil } }
}

/// A message on the wire, waiting for its answer.
struct VISCAFlight: Sendable {
    var message: VISCAMessage
    var wire: [UInt8]
    /// VISCA-over-IP's sequence number (a retransmission keeps it); nil on other links.
    var sequence: UInt32?
    var firstSentAt: Double
    var sentAt: Double
    /// The order it went out in (several go in one write).
    var order: Int
    var attempts = 1
    /// The socket the camera's ACK named; nil until acknowledged.
    var socket: UInt8?
    /// Whether anything came back for it yet (the round trip is timed on the first answer).
    var answered = false
    var acked: Bool { socket != nil }
}

/// What the VISCA driver awaits answers for, on VISCA's two lanes: inquiries, which the camera
/// answers at once and which use no command socket, and commands, which the camera holds in one of
/// its two sockets (a third gets "buffer full"). Replies name no message: over VISCA-over-IP their
/// sequence number does; on a serial line, UDP or TCP stream they are matched by kind, socket and
/// order, the way the VISCA command lists describe them.
struct VISCAExchange: Sendable {
    var inquiry: VISCAFlight?
    /// In the order sent; at most two, the camera's two sockets.
    var commands: [VISCAFlight] = []
    /// A positional move the camera runs in `socket` (its ACK freed the command lane).
    var move: (socket: UInt8, sequence: UInt32?)?
    /// A CAM_Zoom Direct the camera runs in `socket`, the same way.
    var zoomMove: (socket: UInt8, sequence: UInt32?)?

    enum Owner: Equatable { case inquiry, command(Int), move, zoomMove }

    var firstUnacked: Int? { commands.firstIndex { !$0.acked } }

    func command(inSocket socket: UInt8) -> Int? { commands.firstIndex { $0.socket == socket } }

    /// Who `reply` answers. `sequence`: the reply's VISCA-over-IP sequence number, when it has one.
    func owner(of reply: VISCA.Reply, sequence: UInt32?) -> Owner? {
        if let sequence {
            if inquiry?.sequence == sequence { return .inquiry }
            if let i = commands.firstIndex(where: { $0.sequence == sequence }) { return .command(i) }
            if let move, move.sequence == sequence { return .move }
            if let zoomMove, zoomMove.sequence == sequence { return .zoomMove }
            return nil
        }
        switch reply {
        case .completion(_, let data) where !data.isEmpty:
            return inquiry != nil ? .inquiry : nil
        case .completion(0, _):
            // IF_Clear (and a few others) answer with a completion in socket 0 and no ACK.
            if let i = commands.firstIndex(where: { $0.message.kind == .ifClear(urgent: true) || $0.message.kind == .ifClear(urgent: false) }) {
                return .command(i)
            }
            return firstUnacked.map { .command($0) }
        case .completion(let socket, _):
            if let i = command(inSocket: socket) { return .command(i) }
            if let move, move.socket == socket { return .move }
            if let zoomMove, zoomMove.socket == socket { return .zoomMove }
            return firstUnacked.map { .command($0) }
        case .ack:
            return firstUnacked.map { .command($0) }
        case .error(let socket, let code) where socket != 0:
            if let i = command(inSocket: socket) { return .command(i) }
            if let move, move.socket == socket { return .move }
            if let zoomMove, zoomMove.socket == socket { return .zoomMove }
            // "Not executable" in a socket the camera never acknowledged (cameras that skip the ACK).
            return code == 0x41 ? firstUnacked.map { .command($0) } : nil
        case .error(_, 0x03):
            return firstUnacked.map { .command($0) }
        case .error:
            // Length or syntax error, socket 0: the earlier of the inquiry and the unacknowledged command.
            let command = firstUnacked
            switch (inquiry, command) {
            case (nil, nil): return nil
            case (nil, let c?): return .command(c)
            case (_?, nil): return .inquiry
            case (let q?, let c?): return q.order < commands[c].order ? .inquiry : .command(c)
            }
        case .addressSet, .other:
            return nil
        }
    }
}

/// Exponential back-off: each `hit` waits longer (from `first` up to `most`), `reset` starts over.
struct Backoff: Sendable {
    let first: Double
    let most: Double
    private(set) var until = -Double.infinity
    private var next: Double

    init(first: Double, most: Double) { self.first = first; self.most = most; next = first }

    func active(at time: Double) -> Bool { time < until }

    mutating func hit(at time: Double) {
        until = time + next
        next = min(most, next * 2)
    }

    mutating func reset() { next = first }
}
