import Synchronization

/// What the systemd watchdog watches. Every part of the daemon that must keep running beats here:
/// each connected stand's control loop (as it handles the stand's bytes and commands, and its timer,
/// which fires at least at every heartbeat to a silent stand, on the stand's event loop) and each event
/// loop of the I/O group. The watchdog task reads
/// the beats without awaiting any of those parts, so a stuck one cannot also stall the check that
/// reports it.
final class Liveness: Sendable {
    private let beats = Mutex<[String: Double]>([:])

    func beat(_ part: String, at time: Double) { beats.withLock { $0[part] = time } }

    /// A part that stopped on purpose (a stand's link closed) is no longer watched.
    func forget(_ part: String) { beats.withLock { _ = $0.removeValue(forKey: part) } }

    /// The parts that have not beaten for more than `limit` seconds, with how long, by name.
    func stale(at now: Double, limit: Double) -> [(part: String, age: Double)] {
        beats.withLock { beats in
            beats.filter { now - $0.value > limit }.map { (part: $0.key, age: now - $0.value) }.sorted { $0.part < $1.part }
        }
    }
}
