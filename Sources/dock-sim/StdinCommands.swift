import NIOPosix

/// Reads SimAction commands from stdin, one per line, on a thread of its own: a blocking read is
/// the simplest way to accept a terminal, a pipe or /dev/null alike (epoll refuses /dev/null and
/// regular files). At end of input the simulator keeps running; only signals stop it.
enum StdinCommands {
    static func start(deliver: @escaping @Sendable (String) -> Void) -> NIOThreadPool {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        pool.submit { _ in
            while let line = readLine() { deliver(line) }
        }
        return pool
    }
}
