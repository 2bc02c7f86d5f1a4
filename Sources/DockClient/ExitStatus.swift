/// dockctl's exit statuses, by the class of what went wrong (as nmcli has them): a script tells "dockd
/// is not running" from "no such stand" from "another client holds the stand" without reading text.
/// dockctl(1) lists them.
public enum ExitStatus {
    public static let success: Int32 = 0
    /// Anything not below (an internal error in dockd, a closed connection mid-call).
    public static let failure: Int32 = 1
    /// dockd refused the request: a parameter out of range or the limits, an unknown name, something
    /// the stand cannot do, a call too soon after the last (-32602, -32002…-32006).
    public static let refused: Int32 = 2
    /// Another client holds the stand's lease (-32008).
    public static let busy: Int32 = 3
    /// A motion could not be done or did not complete (-32009; `--wait` saw it fail, cancelled or preempted).
    public static let motionFailed: Int32 = 4
    /// No such stand, or none connected (-32001; `--stand` naming no stand dockd has).
    public static let noSuchStand: Int32 = 10
    /// Bad usage: options, arguments, or several stands connected and no `--stand` for a command that changes one.
    public static let usage: Int32 = 64
    /// dockd is not running (no socket, connection refused) or closed the connection.
    public static let notRunning: Int32 = 69
    /// dockd sent something that is not JSON-RPC.
    public static let protocolError: Int32 = 76
    /// The socket's permissions (not in group `dock`) or an administrator's method (-32007).
    public static let permission: Int32 = 77

    public static func forRPCError(_ code: Int) -> Int32 {
        switch code {
        case -32001: noSuchStand
        case -32007: permission
        case -32008: busy
        case -32009: motionFailed
        case -32602, -32002, -32003, -32004, -32005, -32006: refused
        default: failure
        }
    }
}
