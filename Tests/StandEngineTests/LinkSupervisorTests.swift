import DockProtocol
@testable import StandEngine
import Testing

/// The link's life alone (handshake state, silence, pace): pure, its clock the times passed in.
@Suite("Engine: link supervision")
struct LinkSupervisorTests {
    private func opened(at now: Double = 10) -> LinkSupervisor {
        var link = LinkSupervisor(timeout: 0.5, maxRoundTrip: 0.2)
        _ = link.handle(.opened(framesDecoded: 3), at: now)
        return link
    }

    @Test func theHandshakeRunsFromOpenToConnectedAndAClosedConnectedLinkIsReported() {
        var link = opened()
        #expect(link.state == .handshaking)
        _ = link.handle(.handshakeDone, at: 10.1)
        #expect(link.state == .connected && link.lastError == nil)
        let out = link.handle(.closed(reason: "EOF", byDockd: false), at: 11)
        #expect(link.state == .disconnected && link.lastError == "EOF")
        #expect(out.notifications == [.disconnected(reason: "EOF")])
        #expect(out.logs.map(\.level) == [.warning])
    }

    @Test func aLinkDockdClosesItselfIsLoggedAtInfoNotAsAFault() {
        var link = opened()
        _ = link.handle(.handshakeDone, at: 10.1)
        let out = link.handle(.closed(reason: "dockd closed the link: dockd is stopping", byDockd: true), at: 11)
        #expect(out.logs == [EngineLog(level: .info, message: "stand disconnected", metadata: ["reason": "dockd closed the link: dockd is stopping"])])
        #expect(out.notifications == [.disconnected(reason: "dockd closed the link: dockd is stopping")])
    }

    @Test func silenceLongerThanTheTimeoutClosesTheLink() {
        var link = opened()
        #expect(link.handle(.tick, at: 10.5).closeLink == nil, "judged with >")
        _ = link.handle(.framesDecoded(4), at: 10.4)
        #expect(link.silenceDue == 10.9)
        #expect(link.handle(.tick, at: 10.8).closeLink == nil)
        let out = link.handle(.tick, at: 10.95)
        #expect(out.closeLink == "no valid frame for 500 ms: link lost")
        #expect(link.lastError == out.closeLink)
    }

    @Test func onlyANewFrameOrAReportIsASignOfLife() {
        var link = opened()
        _ = link.handle(.framesDecoded(3), at: 10.3)
        #expect(link.silenceDue == 10.5, "the same frame count: nothing new heard")
        _ = link.handle(.report, at: 10.3)
        #expect(link.silenceDue == 10.8)
    }

    @Test func aDropAsksTheShellToCloseWithItsReason() {
        var link = opened()
        _ = link.handle(.handshakeDone, at: 10.1)
        let out = link.handle(.drop(reason: "refused"), at: 10.2)
        #expect(out.closeLink == "refused" && link.lastError == "refused")
        #expect(out.logs.map(\.level) == [.error])
    }

    @Test func aLinkThatNeverConnectedKeepsTheFirstReason() {
        var link = LinkSupervisor(timeout: 0.5, maxRoundTrip: 0.2)
        _ = link.handle(.connectFailed(reason: "no such device"), at: 1)
        _ = link.handle(.opened(framesDecoded: 0), at: 2)
        #expect(link.handle(.closed(reason: "EOF", byDockd: false), at: 3).notifications.isEmpty, "only a connected link's loss is published")
        #expect(link.lastError == "no such device")
    }

    @Test func thePaceIsReportedAtEachChangeWithHysteresis() {
        var link = opened()
        #expect(link.handle(.roundTrip(0.04), at: 11).notifications.isEmpty)
        let late = link.handle(.roundTrip(0.06), at: 12)
        #expect(link.pace == .late)
        #expect(late.notifications.count == 1 && late.logs.first?.level == .warning)
        #expect(link.handle(.roundTrip(0.045), at: 13).notifications.isEmpty, "above four fifths of 50 ms: still late")
        _ = link.handle(.roundTrip(0.25), at: 14)
        #expect(link.pace == .tooLateToSteer)
        let back = link.handle(.roundTrip(0.03), at: 15)
        #expect(link.pace == .onTime)
        guard case .fault(let fault) = back.notifications.first else { Issue.record("a fault report"); return }
        #expect(fault.code == DaemonFault.linkPace.rawValue && fault.severity == 0)
        #expect(fault.text == "the stand answers on time again: round trip 30 ms")
    }
}
