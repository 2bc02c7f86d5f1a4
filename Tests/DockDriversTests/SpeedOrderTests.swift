@testable import dock_driver_probe
import Testing

/// --calibrate's choice of the speed byte to measure again when the table is out of order.
@Suite struct SpeedOrderTests {
    @Test func aTableInOrderNeedsNothingMeasuredAgain() {
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [0.5, 1, 2, 4], measured: [1, 1, 1, 1]) == nil)
    }

    @Test func aByteNoFasterThanTheOneBelowIsMeasuredAgain() {
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [1, 2, 1.9, 4], measured: [1, 1, 1, 1]) == 2)
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [1, 2, 3, 2.9], measured: [1, 1, 1, 1]) == 3, "the last byte")
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [1, 2, 2, 4], measured: [1, 1, 1, 1]) == 2, "as fast is out of order too")
    }

    @Test func theByteBelowIsMeasuredAgainWhenItIsTheOneThatStandsOut() {
        // 5 is faster than both bytes above it: without it the table is in order, without the 3 it is not.
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [1, 5, 3, 4], measured: [1, 1, 1, 1]) == 1)
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [5, 3, 4], measured: [1, 1, 1]) == 0, "the first byte")
    }

    @Test func aByteThatDidNotMoveIsMeasuredAgain() {
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [0, 2, 3], measured: [1, 1, 1]) == 0)
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [1, 0, 3], measured: [1, 1, 1]) == 1)
    }

    @Test func retriesAreBoundedThenTheNextSuspectThenNone() {
        let speeds: [Double] = [1, 2, 1.9, 4]
        #expect(SpeedOrder.byteToMeasureAgain(speeds: speeds, measured: [1, 1, 1 + SpeedOrder.retriesPerByte, 1]) == 1,
                "byte 3 measured again as often as it may: byte 2, the other end of the pair")
        #expect(SpeedOrder.byteToMeasureAgain(speeds: speeds, measured: [1, 1 + SpeedOrder.retriesPerByte, 1 + SpeedOrder.retriesPerByte, 1]) == nil)
        // A later pair out of order still gets its turn when the first has none left.
        #expect(SpeedOrder.byteToMeasureAgain(speeds: [1, 2, 1.9, 4, 3.5], measured: [1, 3, 3, 1, 1]) == 4)
    }
}
