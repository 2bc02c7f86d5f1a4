#if canImport(Glibc)
import Glibc
#endif

/// Opens a serial tty (USB-CDC, UART, or a simulator's pty) the way a stand needs it: exclusive,
/// raw 8N1, no modem control, non-blocking for the event loop.
public enum SerialPort {
    public struct OpenError: Error, CustomStringConvertible {
        public let description: String
    }

    public static func open(path: String, baud: Int) throws(OpenError) -> Int32 {
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw OpenError(description: "cannot open \(path): \(errnoText())") }
        // Another process writing to the same stand would interleave frames: refuse to share it.
        // TIOCEXCL keeps other users out but not root; a lock every dockd takes keeps a second
        // dockd out too.
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let text = errno == EWOULDBLOCK ? "another program (a second dockd?) has it open" : errnoText()
            close(fd)
            throw OpenError(description: "cannot use \(path): \(text)")
        }
        if ioctl(fd, UInt(TIOCEXCL)) != 0 && errno != ENOTTY {
            let text = errnoText(); close(fd)
            throw OpenError(description: "cannot lock \(path) for exclusive use: \(text)")
        }
        var options = termios()
        guard tcgetattr(fd, &options) == 0 else {
            let text = errnoText(); close(fd)
            throw OpenError(description: "\(path) is not a tty: \(text)")
        }
        cfmakeraw(&options)
        options.c_cflag |= tcflag_t(CLOCAL | CREAD)
        options.c_cflag &= ~tcflag_t(CRTSCTS)
        guard let speed = speedConstant(baud) else {
            close(fd)
            throw OpenError(description: "unsupported baud rate \(baud)")
        }
        cfsetispeed(&options, speed)
        cfsetospeed(&options, speed)
        guard tcsetattr(fd, TCSANOW, &options) == 0 else {
            let text = errnoText(); close(fd)
            throw OpenError(description: "cannot configure \(path): \(text)")
        }
        tcflush(fd, TCIOFLUSH)
        return fd
    }

    static func speedConstant(_ baud: Int) -> speed_t? {
        let table: [Int: Int32] = [2400: B2400, 4800: B4800, 9600: B9600, 19200: B19200, 38400: B38400, 57600: B57600, 115200: B115200,
                                   230400: B230400, 460800: B460800, 921600: B921600, 1_000_000: B1000000]
        return table[baud].map { speed_t($0) }
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}

extension SerialPort {
    public static func isSupported(baud: Int) -> Bool { speedConstant(baud) != nil }
}
