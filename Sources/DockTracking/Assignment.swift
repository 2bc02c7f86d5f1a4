/// Minimum-cost assignment (the Hungarian method in its shortest-augmenting-path form, as in
/// Jonker–Volgenant): O(n²·m) for n rows ≤ m columns, which is microseconds at tracker sizes.
public enum Assignment {
    /// Assigns every row to a distinct column minimizing the total cost. `costs` is row-major,
    /// `rows × columns`, with `rows <= columns`. Returns the column of each row.
    public static func solve(costs: [Double], rows: Int, columns: Int) -> [Int] {
        precondition(rows <= columns, "transpose first: rows must not exceed columns")
        precondition(costs.count == rows * columns)
        guard rows > 0 else { return [] }
        // 1-based arrays with a virtual column 0 holding the row being inserted, as in the classic
        // formulation; potentials rowPotential/columnPotential keep reduced costs non-negative.
        var rowPotential = [Double](repeating: 0, count: rows + 1)
        var columnPotential = [Double](repeating: 0, count: columns + 1)
        var rowOfColumn = [Int](repeating: 0, count: columns + 1)
        var previousColumn = [Int](repeating: 0, count: columns + 1)
        var minimumSlack = [Double](repeating: 0, count: columns + 1)
        var visited = [Bool](repeating: false, count: columns + 1)
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
                    let reduced = costs[(currentRow - 1) * columns + candidate - 1]
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
        var columnOfRow = [Int](repeating: -1, count: rows)
        for column in 1...columns where rowOfColumn[column] != 0 {
            columnOfRow[rowOfColumn[column] - 1] = column - 1
        }
        return columnOfRow
    }

    /// Minimum-cost partial matching of any shape: a row left unmatched costs `unmatchedCost`, so the
    /// result maximizes the total of (unmatchedCost − cost) over the chosen pairs, and no pair costing
    /// `unmatchedCost` or more is ever returned. This is the gated assignment trackers need: a gate
    /// failure is a cost at or above `unmatchedCost`, and one far-off pair never forces a worse
    /// matching on the others.
    public static func match(costs: [Double], rows: Int, columns: Int, unmatchedCost: Double) -> [(row: Int, column: Int)] {
        guard rows > 0, columns > 0 else { return [] }
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
        var pairs: [(row: Int, column: Int)] = []
        for (row, column) in assigned.enumerated() where column < columns && costs[row * columns + column] < unmatchedCost {
            pairs.append((row, column))
        }
        return pairs
    }
}
