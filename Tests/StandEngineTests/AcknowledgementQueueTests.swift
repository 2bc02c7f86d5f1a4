import DockDrivers
@testable import StandEngine
import Testing

/// The one queue of replies that wait for the stand's acknowledgement, alone: pure, its clock the
/// times passed in.
@Suite("Engine: the acknowledgement queue")
struct AcknowledgementQueueTests {
    private func state(stop: Bool = false, limits: Bool = false, connected: Bool = true) -> AcknowledgementQueue.Event {
        .standState(stopConfirmed: stop, limitsAcknowledged: limits, connected: connected, stand: "S1")
    }

    @Test func aStopIsAnsweredConfirmedOnceTheStandHasIt() {
        var queue = AcknowledgementQueue()
        queue.wait(for: .stop, token: 7, deadline: 10.5)
        #expect(queue.handle(state(), at: 10.1).isEmpty)
        #expect(queue.nextDeadline == 10.5)
        let replies = queue.handle(state(stop: true), at: 10.2)
        #expect(replies.map(\.token) == [7])
        #expect(replies.first?.result == .success(.stopped(confirmed: true)))
        #expect(queue.nextDeadline == nil)
    }

    @Test func eachReplyIsAnsweredAtItsDeadlineAnyway() {
        var queue = AcknowledgementQueue()
        queue.wait(for: .stop, token: 1, deadline: 10.5)
        queue.wait(for: .limits, token: 2, deadline: 11.5)
        #expect(queue.nextDeadline == 10.5)
        let atStopDeadline = queue.handle(state(), at: 10.5)
        #expect(atStopDeadline.map(\.token) == [1])
        #expect(atStopDeadline.first?.result == .success(.stopped(confirmed: false)))
        #expect(queue.nextDeadline == 11.5)
        let atLimitsDeadline = queue.handle(state(), at: 11.5)
        #expect(atLimitsDeadline.first?.result == .failure(.motionFailed("the stand did not acknowledge LIMITS")))
    }

    @Test func aLostLinkAnswersEveryReplyAtOnce() {
        var queue = AcknowledgementQueue()
        queue.wait(for: .limits, token: 1, deadline: 11.5)
        queue.wait(for: .stop, token: 2, deadline: 10.5)
        let replies = queue.handle(state(stop: true, limits: true, connected: false), at: 10)
        #expect(replies.map(\.token) == [1, 2], "in the order they were asked")
        #expect(replies[0].result == .failure(.notConnected(stand: "S1")))
        #expect(replies[1].result == .success(.stopped(confirmed: false)))
    }

    @Test func aRefusalAnswersOnlyWhatWasRefused() {
        var queue = AcknowledgementQueue()
        queue.wait(for: .stop, token: 1, deadline: 10.5)
        queue.wait(for: .limits, token: 2, deadline: 11.5)
        let replies = queue.handle(.refused(.limits, reason: "out of range"), at: 10)
        #expect(replies.map(\.token) == [2])
        #expect(replies.first?.result == .failure(.motionFailed("the stand refused LIMITS: out of range")))
        #expect(queue.handle(.refused(.stop, reason: "busy"), at: 10).first?.result == .success(.stopped(confirmed: false)))
        #expect(queue.nextDeadline == nil)
    }

    @Test func acknowledgedLimitsAreAnsweredOk() {
        var queue = AcknowledgementQueue()
        queue.wait(for: .limits, token: 3, deadline: 11.5)
        #expect(queue.handle(state(stop: true), at: 10).isEmpty, "a confirmed stop does not answer a LIMITS")
        #expect(queue.handle(state(limits: true), at: 10.1).first?.result == .success(.ok))
    }

    @Test func aCameraPresetIsAnsweredByItsOutcomeTheOldestFirst() {
        var queue = AcknowledgementQueue()
        let save = CameraPresetRequest.store(name: "stage", slot: .memory(3))
        queue.wait(for: .cameraPreset(save), token: 1, deadline: 20)
        queue.wait(for: .cameraPreset(save), token: 2, deadline: 21)
        queue.wait(for: .stop, token: 3, deadline: 20)
        #expect(queue.handle(state(), at: 10).isEmpty)  // the stand's acknowledgements do not answer it
        let first = queue.handle(.cameraPreset(save, .success(.memory(3))), at: 10.1)
        #expect(first.map(\.token) == [1])
        #expect(first.first?.result == .success(.cameraPreset(.memory(3))))
        let refused = queue.handle(.cameraPreset(save, .failure(CameraPresetRefusal("memory full"))), at: 10.2)
        #expect(refused.map(\.token) == [2])
        #expect(refused.first?.result == .failure(.cameraRefused("memory full")))
        #expect(queue.nextDeadline == 20)  // the STOP still waits
    }

    @Test func aCameraPresetUnansweredFailsAtItsDeadlineAndOnALostLink() {
        var queue = AcknowledgementQueue()
        queue.wait(for: .cameraPreset(.remove(.token("T1"))), token: 1, deadline: 20)
        queue.wait(for: .cameraPreset(.remove(.token("T2"))), token: 2, deadline: 30)
        let late = queue.handle(state(), at: 20)
        #expect(late.map(\.token) == [1])
        #expect(late.first?.result == .failure(.cameraRefused("no answer from the camera")))
        let lost = queue.handle(state(connected: false), at: 21)
        #expect(lost.map(\.token) == [2])
        #expect(lost.first?.result == .failure(.notConnected(stand: "S1")))
    }
}
