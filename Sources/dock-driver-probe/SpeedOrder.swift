/// Which speed byte to measure again when the measured table is not positive and strictly
/// increasing, as a profile's must be. A window of half a second on a busy host measures a byte
/// now and then too slow or too fast: measuring the byte that breaks the order again (or the one
/// below it, when it is that one that stands out) corrects the table where raising a byte to just
/// above the one below would write a speed the camera does not have.
enum SpeedOrder {
    /// Times a byte is measured again at most; then the table is made increasing as it is.
    static let retriesPerByte = 2

    /// The byte (index into `speeds`) to measure again, nil when the table is in order or every byte
    /// that could be at fault has been measured `retriesPerByte` more times already. `measured`:
    /// how many times each byte has been measured. At the first byte out of order: one that did not
    /// move; the one below it when leaving that one out restores the order and leaving this one out
    /// does not (it was measured too fast); else this one.
    static func byteToMeasureAgain(speeds: [Double], measured: [Int]) -> Int? {
        for i in speeds.indices where speeds[i] <= 0 || (i > 0 && speeds[i] <= speeds[i - 1]) {
            var suspects = [i]
            if speeds[i] > 0 {
                let withoutThis = i + 1 == speeds.count || speeds[i - 1] < speeds[i + 1]
                let withoutBelow = i - 1 == 0 || speeds[i - 2] < speeds[i]
                suspects = withoutBelow && !withoutThis ? [i - 1, i] : [i, i - 1]
            }
            if let again = suspects.first(where: { measured[$0] <= retriesPerByte }) { return again }
        }
        return nil
    }
}
