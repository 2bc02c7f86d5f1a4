import Testing
@testable import DockTracking

@Suite struct PersonPairingTests {
    private func body(_ x: Double) -> Observation {
        Observation(kind: .body, box: Box(centerX: x, centerY: 0, width: 0.2, height: 0.6))
    }

    private func face(_ x: Double, _ y: Double) -> Observation {
        Observation(kind: .face, box: Box(centerX: x, centerY: y, width: 0.06, height: 0.08))
    }

    @Test func faceInUpperBodyJoinsIt() {
        let subjects = PersonPairing.pair([body(0), face(0.01, -0.24)])
        #expect(subjects.count == 1)
        #expect(subjects.first?.body != nil && subjects.first?.face != nil)
        #expect(subjects.first?.category == .person)
    }

    @Test func faceAtWaistOrBesideTheBodyStaysAlone() {
        #expect(PersonPairing.pair([body(0), face(0, 0.1)]).count == 2)
        #expect(PersonPairing.pair([body(0), face(0.15, -0.24)]).count == 2)
    }

    @Test func closePeopleGetTheirOwnFaces() {
        // Each face lies inside both (overlapping) bodies' upper parts; the optimal pairing still
        // gives each body the face nearest its head.
        let subjects = PersonPairing.pair([body(0), body(0.08), face(0.085, -0.24), face(-0.005, -0.24)])
        #expect(subjects.count == 2)
        for subject in subjects {
            #expect(abs(subject.face!.box.centerX - subject.body!.box.centerX) < 0.01)
        }
    }

    @Test func objectsAreNeverPaired() {
        let object = Observation(kind: .object, box: Box(centerX: 0, centerY: -0.24, width: 0.05, height: 0.05))
        let subjects = PersonPairing.pair([body(0), object])
        #expect(subjects.count == 2)
        #expect(subjects.contains { $0.category == .object })
    }
}
