import DockCore
import DockProtocol

/// Who controls a stand, and a stop that holds it. DockKit's model: the app that changes something
/// (tracking off, framing, limits, motion) holds it until it disconnects, when it all reverts; a
/// stop wins over that app's own renewals until its issuer or the holder says otherwise.
struct ControlLease: Sendable {
    /// The client whose changes are in force (nil: nobody; system tracking follows its defaults).
    private(set) var holder: ClientRef?
    private(set) var stop: StopHold?
    /// The limits the holder asked for, re-sent to the stand after a reconnect.
    var limits: [Axis: LimitRequest] = [:]

    struct StopHold: Sendable, Equatable {
        var by: ClientRef
        /// The lease holder when the stop came: its renewals do not lift the stop.
        var holderAtStop: Int?
    }

    enum Change: Equatable {
        case none
        case takenOver(from: ClientRef)
        case acquired
    }

    /// Takes (or keeps) the lease for `client`; another client's only with `force`.
    mutating func acquire(_ client: ClientRef, force: Bool, stand: String) throws(EngineError) -> Change {
        if let held = holder, held.id != client.id {
            guard force else { throw .busy(holder: held, stand: stand) }
            holder = client
            return .takenOver(from: held)
        }
        let change: Change = holder == nil ? .acquired : .none
        holder = client
        return change
    }

    /// Gives the lease back; true when `client` held it (its changes must revert).
    mutating func release(_ client: Int) -> Bool {
        if stop?.holderAtStop == client { stop?.holderAtStop = nil }
        guard holder?.id == client else { return false }
        holder = nil
        limits = [:]
        return true
    }

    // MARK: - Stop

    mutating func hold(stopBy client: ClientRef) {
        stop = StopHold(by: client, holderAtStop: holder?.id)
    }

    /// Whether `client` may set the stand in motion while a stop holds; if so the stop ends. The
    /// stop's issuer may; the client that held the lease when the stop came may not (its renewals
    /// are what the stop is for) — it calls `resume`; any other client is a new controller.
    mutating func mayMove(_ client: ClientRef) -> Bool {
        guard let stop else { return true }
        if stop.by.id != client.id && stop.holderAtStop == client.id { return false }
        self.stop = nil
        return true
    }

    /// `resume`: from the stop's issuer, the lease holder, or anyone when nobody holds the lease.
    mutating func resume(_ client: ClientRef, stand: String) throws(EngineError) -> Bool {
        guard let stop else { return false }
        guard stop.by.id == client.id || holder == nil || holder?.id == client.id else {
            throw .busy(holder: holder!, stand: stand)
        }
        self.stop = nil
        return true
    }
}
