enum Benchmark {
    static func run(steps: Int) {}
}
