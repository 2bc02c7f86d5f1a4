import Testing
@testable import DockTracking

@Suite struct AssignmentTests {
    /// All injective maps of `rows` rows into `columns` columns, by exhaustive search.
    private func bruteForceMinimum(_ costs: [Double], rows: Int, columns: Int) -> Double {
        var best = Double.infinity
        var used = [Bool](repeating: false, count: columns)
        func search(_ row: Int, _ total: Double) {
            if row == rows { best = min(best, total); return }
            for column in 0..<columns where !used[column] {
                used[column] = true
                search(row + 1, total + costs[row * columns + column])
                used[column] = false
            }
        }
        search(0, 0)
        return best
    }

    /// Best total of partial matchings where an unmatched row costs `unmatchedCost`.
    private func bruteForcePartial(_ costs: [Double], rows: Int, columns: Int, unmatchedCost: Double) -> Double {
        var best = Double.infinity
        var used = [Bool](repeating: false, count: columns)
        func search(_ row: Int, _ total: Double) {
            if row == rows { best = min(best, total); return }
            search(row + 1, total + unmatchedCost)
            for column in 0..<columns where !used[column] && costs[row * columns + column] < unmatchedCost {
                used[column] = true
                search(row + 1, total + costs[row * columns + column])
                used[column] = false
            }
        }
        search(0, 0)
        return best
    }

    @Test func solveMatchesBruteForceOnRandomMatrices() {
        var generator = SplitMix64(seed: 11)
        for trial in 0..<300 {
            let rows = 1 + trial % 5
            let columns = rows + (trial / 5) % 3
            let costs = (0..<rows * columns).map { _ in Double(generator.next() % 1000) / 10 }
            let assignment = Assignment.solve(costs: costs, rows: rows, columns: columns)
            #expect(Set(assignment).count == rows, "columns must be distinct")
            let total = assignment.enumerated().map { costs[$0.offset * columns + $0.element] }.reduce(0, +)
            #expect(abs(total - bruteForceMinimum(costs, rows: rows, columns: columns)) < 1e-9, "trial \(trial): \(costs)")
        }
    }

    @Test func greedyIsNotOptimalButSolveIs() {
        // Greedy takes the 1 and is forced into 100; the optimum is 2 + 2.
        let costs: [Double] = [1, 2,
                               2, 100]
        #expect(Assignment.solve(costs: costs, rows: 2, columns: 2) == [1, 0])
    }

    @Test func partialMatchingMatchesBruteForce() {
        var generator = SplitMix64(seed: 5)
        for trial in 0..<300 {
            let rows = 1 + trial % 4
            let columns = 1 + (trial / 4) % 4
            let costs = (0..<rows * columns).map { _ in Double(generator.next() % 100) / 100 }
            let pairs = Assignment.match(costs: costs, rows: rows, columns: columns, unmatchedCost: 0.6)
            #expect(Set(pairs.map(\.column)).count == pairs.count)
            #expect(pairs.allSatisfy { costs[$0.row * columns + $0.column] < 0.6 })
            let total = pairs.map { costs[$0.row * columns + $0.column] }.reduce(0, +) + Double(rows - pairs.count) * 0.6
            #expect(abs(total - bruteForcePartial(costs, rows: rows, columns: columns, unmatchedCost: 0.6)) < 1e-9,
                    "trial \(trial)")
        }
    }
}
