/// A row matched to a column. (A struct rather than a tuple: arrays of tuples need their metadata
/// built at run time on every call, which showed up as a tenth of a tracking step.)
public struct AssignedPair: Sendable, Hashable {
    public let row: Int
    public let column: Int
}

/// Minimum-cost assignment (the Hungarian method in its shortest-augmenting-path form, as in
/// Jonker–Volgenant): O(n²·m) for n rows ≤ m columns, which is microseconds at tracker sizes.
public enum Assignment {
    /// Assigns every row to a distinct column minimizing the total cost. `costs` is row-major,
    /// `rows × columns`, with `rows <= columns`. Returns the column of each row.
    public static func solve(costs: [Double], rows: Int, columns: Int) -> [Int] {
        precondition(rows <= columns, "transpose first: rows must not exceed columns")
        precondition(costs.count == rows * columns)
        guard rows > 0 else { return [] }
        var columnOfRow = [Int](repeating: -1, count: rows)
        // Work arrays live on the stack: this runs several times per tracking step, and heap arrays
        // (allocation plus run-time metadata lookups) cost more than the algorithm at these sizes.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: rows + 1 + 2 * (columns + 1)) { doubles in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * (columns + 1)) { integers in
                withUnsafeTemporaryAllocation(of: Bool.self, capacity: columns + 1) { visited in
                    costs.withUnsafeBufferPointer { cost in
                        doubles.initialize(repeating: 0)
                        integers.initialize(repeating: 0)
                        visited.initialize(repeating: false)
                        // 1-based arrays with a virtual column 0 holding the row being inserted, as in
                        // the classic formulation; the potentials keep reduced costs non-negative.
                        let rowPotential = doubles.baseAddress!  // rows + 1 entries
                        let columnPotential = rowPotential + rows + 1  // columns + 1
                        let minimumSlack = columnPotential + columns + 1  // columns + 1
                        let rowOfColumn = integers.baseAddress!
                        let previousColumn = rowOfColumn + columns + 1
                        for row in 1...rows {
                            rowOfColumn[0] = row
                            var column = 0
                            for index in 0...columns {
                                minimumSlack[index] = .infinity
                                visited[index] = false
                            }
                            repeat {
                                visited[column] = true
                                let currentRow = rowOfColumn[column]
                                var delta = Double.infinity
                                var nextColumn = 0
                                for candidate in 1...columns where !visited[candidate] {
                                    let reduced = cost[(currentRow - 1) * columns + candidate - 1]
                                        - rowPotential[currentRow] - columnPotential[candidate]
                                    if reduced < minimumSlack[candidate] {
                                        minimumSlack[candidate] = reduced
                                        previousColumn[candidate] = column
                                    }
                                    if minimumSlack[candidate] < delta {
                                        delta = minimumSlack[candidate]
                                        nextColumn = candidate
                                    }
                                }
                                for index in 0...columns {
                                    if visited[index] {
                                        rowPotential[rowOfColumn[index]] += delta
                                        columnPotential[index] -= delta
                                    } else {
                                        minimumSlack[index] -= delta
                                    }
                                }
                                column = nextColumn
                            } while rowOfColumn[column] != 0
                            // Flip the augmenting path back to the virtual column.
                            repeat {
                                let previous = previousColumn[column]
                                rowOfColumn[column] = rowOfColumn[previous]
                                column = previous
                            } while column != 0
                        }
                        for column in 1...columns where rowOfColumn[column] != 0 {
                            columnOfRow[rowOfColumn[column] - 1] = column - 1
                        }
                    }
                }
            }
        }
        return columnOfRow
    }

    /// Minimum-cost partial matching of any shape: a row left unmatched costs `unmatchedCost`, so the
    /// result maximizes the total of (unmatchedCost − cost) over the chosen pairs, and no pair costing
    /// `unmatchedCost` or more is ever returned. This is the gated assignment trackers need: a gate
    /// failure is a cost at or above `unmatchedCost`, and one far-off pair never forces a worse
    /// matching on the others.
    public static func match(costs: [Double], rows: Int, columns: Int, unmatchedCost: Double) -> [AssignedPair] {
        guard rows > 0, columns > 0 else { return [] }
        // Rows and columns joined by admissible pairs form independent sub-problems; solving each
        // alone is exact and, with well-separated subjects, turns most of them into trivial 1×1s.
        var parent = Array(0..<(rows + columns))
        for row in 0..<rows {
            for column in 0..<columns where costs[row * columns + column] < unmatchedCost {
                parent[root(of: row, in: &parent)] = root(of: rows + column, in: &parent)
            }
        }
        for node in parent.indices { parent[node] = root(of: node, in: &parent) }
        var done = [Bool](repeating: false, count: rows)
        var pairs: [AssignedPair] = []
        pairs.reserveCapacity(min(rows, columns))
        // Reused across components: at ten subjects, allocations cost more than the arithmetic.
        var memberRows: [Int] = [], memberColumns: [Int] = [], subCosts: [Double] = []
        memberRows.reserveCapacity(rows)
        memberColumns.reserveCapacity(columns)
        for row in 0..<rows where !done[row] {
            let component = parent[row]
            memberColumns.removeAll(keepingCapacity: true)
            for column in 0..<columns where parent[rows + column] == component { memberColumns.append(column) }
            if memberColumns.isEmpty { continue }  // no admissible pair: the row stays unmatched
            memberRows.removeAll(keepingCapacity: true)
            for member in row..<rows where parent[member] == component {
                memberRows.append(member)
                done[member] = true
            }
            if memberRows.count == 1, memberColumns.count == 1 {
                pairs.append(AssignedPair(row: row, column: memberColumns[0]))
                continue
            }
            subCosts.removeAll(keepingCapacity: true)
            for member in memberRows {
                for column in memberColumns { subCosts.append(costs[member * columns + column]) }
            }
            for pair in matchDense(costs: subCosts, rows: memberRows.count, columns: memberColumns.count, unmatchedCost: unmatchedCost) {
                pairs.append(AssignedPair(row: memberRows[pair.row], column: memberColumns[pair.column]))
            }
        }
        return pairs
    }

    /// Union-find root with path halving.
    private static func root(of node: Int, in parent: inout [Int]) -> Int {
        var node = node
        while parent[node] != node {
            parent[node] = parent[parent[node]]
            node = parent[node]
        }
        return node
    }

    private static func matchDense(costs: [Double], rows: Int, columns: Int, unmatchedCost: Double) -> [AssignedPair] {
        // Extend to rows × (columns + rows): row r may take its private "unmatched" column
        // columns + r at unmatchedCost; the other private columns are unreachable for it.
        let width = columns + rows
        let forbidden = unmatchedCost * 4 + 1
        var extended = [Double](repeating: forbidden, count: rows * width)
        for row in 0..<rows {
            for column in 0..<columns {
                extended[row * width + column] = min(costs[row * columns + column], forbidden)
            }
            extended[row * width + columns + row] = unmatchedCost
        }
        let assigned = solve(costs: extended, rows: rows, columns: width)
        var pairs: [AssignedPair] = []
        for (row, column) in assigned.enumerated() where column < columns && costs[row * columns + column] < unmatchedCost {
            pairs.append(AssignedPair(row: row, column: column))
        }
        return pairs
    }
}
