import DockCore
import Testing

@Suite("Tracking's dead band")
struct TrackingDeadBandTests {
    /// A still subject seen by a jittery detector: its position is steady (6 mrad off the camera,
    /// inside the dead band), but the rate the tracker estimates from the jitter wanders ±0.05 rad/s
    /// (under the dead band's rate), and the target is 0.2 s old when it is used: predicted across
    /// that, the error leaves the dead band.
    @Test("a still subject whose estimated rate is noise does not restart the camera")
    func noisyRateAtRest() {
        var controller = TrackingController(configuration: .tuned)
        var moved = 0
        for frame in 0..<90 {  // 3 s at 30 fps, a control step per frame
            let time = 1 + Double(frame) / 30
            let rate = (frame / 10) % 2 == 0 ? 0.05 : -0.05
            let target = TrackingTarget(yaw: 0.006, pitch: 0, yawRate: rate, pitchRate: 0, time: time - 0.2)
            let rates = controller.command(target: target, positions: [.yaw: 0, .pitch: 0], at: time)
            if rates.values.contains(where: { $0 != 0 }) { moved += 1 }
        }
        #expect(moved == 0, "the camera moved in \(moved) of 90 steps")
    }

    /// From the review of the jump rule: a still subject at 4× zoom, its detection jittering from
    /// frame to frame, ±1 mrad for a second, then ±3.8 (±15.2 magnified: each frame's own error just
    /// over the dead band, their mean on the subject). Judged from one update to the next against
    /// two dead bands, every frame of the larger jitter was a "jump" that replaced the target's mean
    /// with that one frame's, and the camera moved on noise.
    @Test("a zoomed camera's detector jitter on a still subject is no jump and moves nothing")
    func zoomedJitterIsNoJump() {
        var controller = TrackingController(configuration: .tuned)
        controller.magnification = 4
        var moved = 0
        for frame in 0..<90 {  // 3 s at 30 fps, a control step per frame
            let time = 1 + Double(frame) / 30
            let jitter = frame < 30 ? 0.001 : 0.0038
            let target = TrackingTarget(yaw: frame % 2 == 0 ? jitter : -jitter, pitch: 0, time: time - 0.1)
            let rates = controller.command(target: target, positions: [.yaw: 0, .pitch: 0], at: time)
            if rates.values.contains(where: { $0 != 0 }) { moved += 1 }
        }
        #expect(moved == 0, "the camera moved in \(moved) of 90 steps")
    }

    @Test("a subject that really moves off still restarts it")
    func realMove() {
        var controller = TrackingController(configuration: .tuned)
        _ = controller.command(target: TrackingTarget(yaw: 0.006, pitch: 0, time: 1), positions: [.yaw: 0, .pitch: 0], at: 1)
        let rates = controller.command(target: TrackingTarget(yaw: 0.08, pitch: 0, yawRate: 0.3, pitchRate: 0, time: 1.03),
                                       positions: [.yaw: 0, .pitch: 0], at: 1.05)
        #expect((rates[.yaw] ?? 0) > 0.3)
    }

    /// Issue 22, `still-subject` at seed 2: a camera turning onto a still subject entered the
    /// settle band (3 mrad) from one side and came to rest at its edge, 2.3 mrad short in yaw and
    /// 3.0 in pitch, for good. The subject here is seen without noise, 40 mrad across and 30 up;
    /// the camera turns as commanded, in virtual time, frames at 30 fps 0.1 s after capture.
    @Test("a camera closing on a still subject finishes its move on it, not at the settle band's edge")
    func aMoveEndsOnTheSubject() {
        var controller = TrackingController(configuration: .tuned)
        let subject = (yaw: 0.04, pitch: 0.03)
        var camera = (yaw: 0.0, pitch: 0.0), target: TrackingTarget?
        for step in 0..<300 {
            let now = Double(step) / 100
            if step % 3 == 0 { target = TrackingTarget(yaw: subject.yaw, pitch: subject.pitch, time: now - 0.1) }
            let rates = controller.command(target: target, positions: [.yaw: camera.yaw, .pitch: camera.pitch], at: now)
            camera.yaw += (rates[.yaw] ?? 0) * 0.01
            camera.pitch += (rates[.pitch] ?? 0) * 0.01
        }
        #expect(!controller.isRecentering, "at rest")
        #expect(abs(camera.yaw - subject.yaw) <= 0.001, "yaw \((subject.yaw - camera.yaw) * 1000) mrad short")
        #expect(abs(camera.pitch - subject.pitch) <= 0.001, "pitch \((subject.pitch - camera.pitch) * 1000) mrad short")
    }

    /// Issue 22, `occlusion-2s` at seed 1: a subject hidden for 2 s is found again 113 mrad on.
    /// The camera turned onto it, but finished its move on the target's mean, which still averaged
    /// in where the subject had been hidden (2.9 mrad behind): a second into the pause the camera
    /// went back to that, and rested 1.9 mrad off the subject. Here without noise: the target held
    /// (stale) for 2 s, then the subject seen at its new place, frames at 30 fps 0.08 s late.
    @Test("a subject found again elsewhere gets a camera that rests on it, not on the mean of where it was")
    func aSubjectFoundAgainElsewhere() {
        var controller = TrackingController(configuration: .tuned)
        let hidden = (yaw: 0.057, pitch: -0.008), found = (yaw: 0.170, pitch: -0.008)
        var camera = hidden, target = TrackingTarget(yaw: hidden.yaw, pitch: hidden.pitch, time: 0)
        for step in 0..<500 {
            let now = Double(step) / 100
            if now >= 2, step % 3 == 0 { target = TrackingTarget(yaw: found.yaw, pitch: found.pitch, time: now - 0.08) }
            let rates = controller.command(target: target, positions: [.yaw: camera.yaw, .pitch: camera.pitch], at: now)
            camera.yaw += (rates[.yaw] ?? 0) * 0.01
            camera.pitch += (rates[.pitch] ?? 0) * 0.01
        }
        #expect(!controller.isRecentering, "at rest")
        #expect(abs(camera.yaw - found.yaw) <= 0.001, "yaw \((found.yaw - camera.yaw) * 1000) mrad off the subject")
    }

    /// At 10× a fixed 0.015 rad band is about a fifth of the frame: a head shot's face drifted
    /// out of the frame inside it (the zoomed walk lost its subject 4 % of the time).
    @Test("the dead band is the same part of the frame at any zoom")
    func deadBandFollowsTheZoom() {
        func moves(magnification: Double) -> Bool {
            var controller = TrackingController(configuration: .tuned)
            controller.magnification = magnification
            var moved = false
            for frame in 0..<30 {
                let time = 1 + Double(frame) / 30
                let rates = controller.command(target: TrackingTarget(yaw: 0.006, pitch: 0, time: time), positions: [.yaw: 0, .pitch: 0], at: time)
                if rates.values.contains(where: { $0 != 0 }) { moved = true }
            }
            return moved
        }
        #expect(!moves(magnification: 1), "6 mrad is inside the band unzoomed")
        #expect(moves(magnification: 10), "and 6 % of the frame's height at 10×")
    }
}

/// What a real detector's jitter on a still person becomes after the tracker (measured on
/// `still-subject-noisy`, 8 % box jitter and 25 % misses): the target wanders by ~6 mrad,
/// correlated over a few frames, and the rate estimated from it by ~0.07 rad/s, at
/// times 0.2 (a body box's velocity reached 0.25).
/// Deterministic: a fixed linear congruential sequence.
private struct DetectorJitter {
    private var state: UInt64 = 0x2545_F491_4F6C_DD1D
    private var offset = 0.0, rate = 0.0

    private mutating func uniform() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(state >> 11) / Double(UInt64(1) << 53) * 2 - 1
    }

    /// The next frame's offset from the true aim (rad) and estimated rate (rad/s).
    mutating func next() -> (offset: Double, rate: Double) {
        offset = 0.7 * offset + 0.0075 * uniform()
        rate = 0.6 * rate + 0.1 * uniform()
        return (offset, rate)
    }
}

@Suite("Tracking's dead band under a real detector's noise")
struct TrackingDetectorNoiseTests {
    /// The controller closed around a camera that turns as commanded, in virtual time: frames at
    /// 30 fps reach it 0.1 s after capture, it runs every 10 ms; the camera starts on the subject.
    @Test("a still subject under box jitter gets a still camera: moving < 2 % of the time")
    func stillSubject() {
        var controller = TrackingController(configuration: .tuned)
        var jitter = DetectorJitter()
        let subject = (yaw: 0.05, pitch: 0.02)
        var camera = subject, target: TrackingTarget?, moving = 0, judged = 0
        for step in 0..<2000 {
            let now = Double(step) / 100
            if step % 3 == 0 {
                let (offset, rate) = jitter.next()
                target = TrackingTarget(yaw: subject.yaw + offset, pitch: subject.pitch + offset / 2, yawRate: rate, pitchRate: -rate, time: now - 0.1)
            }
            let rates = controller.command(target: target, positions: [.yaw: camera.yaw, .pitch: camera.pitch], at: now)
            camera.yaw += (rates[.yaw] ?? 0) * 0.01
            camera.pitch += (rates[.pitch] ?? 0) * 0.01
            guard now >= 1 else { continue }
            judged += 1
            if rates.values.contains(where: { $0 != 0 }) { moving += 1 }
        }
        let fraction = Double(moving) / Double(judged)
        #expect(fraction < 0.02, "moving \(fraction * 100) % of the time")
    }
}

@Suite("Tracking a posture change")
struct TrackingPostureTests {
    /// A person sits down: the face drops 0.25 rad in 1.5 s and stops. The tracker reports it 0.1 s
    /// late, with a rate that lags the truth by a further 0.15 s (a Kalman filter's velocity), so
    /// at the stop it still says the face is moving down.
    @Test("the camera follows a sitting person down once, without running past where the face stopped")
    func sitDown() {
        func face(_ t: Double) -> (pitch: Double, rate: Double) {
            let f = min(1, max(0, (t - 1) / 1.5))
            return (-0.25 * f * f * (3 - 2 * f), -0.25 * 6 * f * (1 - f) / 1.5)
        }
        var controller = TrackingController(configuration: .tuned)
        var pitch = 0.0, lowest = 0.0, target: TrackingTarget?
        for step in 0..<500 {
            let now = Double(step) / 100
            if step % 3 == 0 {
                let capture = now - 0.1
                target = TrackingTarget(yaw: 0, pitch: face(capture).pitch, yawRate: 0, pitchRate: face(capture - 0.15).rate, time: capture)
            }
            pitch += (controller.command(target: target, positions: [.yaw: 0, .pitch: pitch], at: now)[.pitch] ?? 0) * 0.01
            lowest = min(lowest, pitch)
        }
        let overshoot = -0.25 - lowest
        // Under 5 % of a 39° field of view (issue 22's target for sit/stand).
        #expect(overshoot < 0.05 * 39 * .pi / 180, "overshoot \(overshoot) rad")
        #expect(abs(pitch + 0.25) < 0.0075, "at rest at pitch \(pitch)")
    }

    /// A person stands up in a second: the face rises 0.28 rad and stops. The tracker reports it
    /// 0.1 s late; its filter's rate lags the truth by a further 0.15 s and its position runs past
    /// the stop by what that stale rate carries it (20 mrad at the stop, as in sit-stand), while the
    /// frame's detection stops where the face did. The camera stops there too.
    @Test("a filter running past a face that stopped does not carry the camera past it")
    func standUpPastTheFilter() {
        let (highest, pitch) = Self.standUp(missing: 0..<0)
        // Under 5 % of a 39° field of view (issue 22's target for sit/stand; 44 mrad with the rate
        // dropped only past the filtered face, 19 now).
        #expect(highest - 0.28 < 0.05 * 39 * .pi / 180, "overshoot \(highest - 0.28) rad")
        #expect(abs(pitch - 0.28) < 0.0075, "at rest at pitch \(pitch)")
    }

    /// The same stand-up, but the detector misses the face on the frames captured in the 0.1 s
    /// after it stops (sit-stand at seed 2 missed two there): those frames have no detection, only
    /// the filtered face, still running on past the stop. Taken for the face, it brought the full
    /// rate back (the camera past the filter's face is behind it) and carried the camera 53 mrad
    /// past the face. The camera runs no further past it than with every frame detected.
    @Test("frames that miss a face that stopped do not bring back the rate that runs the camera past it")
    func standUpThenMissed() {
        let seen = Self.standUp(missing: 0..<0).highest - 0.28, missed = Self.standUp(missing: 2..<2.1).highest - 0.28
        #expect(missed <= seen + 0.001, "overshoot \(missed * 1000) mrad with the frames after the stop missed, \(seen * 1000) with them detected")
    }

    /// A face rising 0.28 rad from t = 1 s to 2 s (smoothstep) and stopping, seen at 30 fps 0.1 s
    /// after capture through a filter whose rate lags 0.15 s; no detection on the frames captured
    /// in `missing`. The camera's highest pitch and where it ends, controlled every 10 ms.
    private static func standUp(missing: Range<Double>) -> (highest: Double, pitch: Double) {
        func face(_ t: Double) -> (pitch: Double, rate: Double) {
            let f = min(1, max(0, t - 1))
            return (0.28 * f * f * (3 - 2 * f), 0.28 * 6 * f * (1 - f))
        }
        var controller = TrackingController(configuration: .tuned)
        var pitch = 0.0, highest = 0.0, target: TrackingTarget?
        for step in 0..<500 {
            let now = Double(step) / 100
            if step % 3 == 0 {
                let capture = now - 0.1, rate = face(capture - 0.15).rate
                let filtered = face(capture).pitch + 0.05 * (rate - face(capture).rate)
                target = TrackingTarget(yaw: 0, pitch: filtered, yawRate: 0, pitchRate: rate, time: capture, measuredYaw: 0,
                                        measuredPitch: missing.contains(capture) ? nil : face(capture).pitch)
            }
            pitch += (controller.command(target: target, positions: [.yaw: 0, .pitch: pitch], at: now)[.pitch] ?? 0) * 0.01
            highest = max(highest, pitch)
        }
        return (highest, pitch)
    }
}

@Suite("The camera moves or rests as a whole")
struct TrackingAxesTogetherTests {
    /// A person walking across: the yaw follows them, while their pitch stays 8 mrad off the
    /// camera's (inside the dead band, as the drift of a person whose distance changes). In
    /// virtual time, frames at 30 fps 0.1 s after capture, the controller every 10 ms.
    @Test("while the yaw follows a walker, the pitch corrects an error inside the dead band")
    func pitchFollowsDuringAYawMove() {
        var controller = TrackingController(configuration: .tuned)
        var camera = (yaw: 0.0, pitch: 0.0), target: TrackingTarget?
        for step in 0..<200 {
            let now = Double(step) / 100
            if step % 3 == 0 {
                let captured = now - 0.1
                target = TrackingTarget(yaw: 0.15 * max(0, captured), pitch: 0.008, yawRate: captured > 0 ? 0.15 : 0, pitchRate: 0, time: captured)
            }
            let rates = controller.command(target: target, positions: [.yaw: camera.yaw, .pitch: camera.pitch], at: now)
            camera.yaw += (rates[.yaw] ?? 0) * 0.01
            camera.pitch += (rates[.pitch] ?? 0) * 0.01
        }
        #expect(abs(camera.pitch - 0.008) < 0.003, "pitch \(camera.pitch * 1000) mrad, the subject's 8")
    }
}

@Suite("Tracking a subject that stops dead")
struct TrackingDeadStopTests {
    /// A pet dashes across (0.9 rad/s for a second) and stops dead. The tracker reports it 0.1 s
    /// late at 30 fps; its filter's rate lags the truth by a further 0.15 s, and its position runs
    /// past the stop by what that stale rate carries it, while the frame's detection stops where the
    /// pet did (the suite's `pet`: the camera ran 0.24 rad past the dash's end). The controller runs
    /// every 10 ms and the camera turns as commanded. No controller can stop short of the dash's
    /// rate times the report's delay and the latency predicted (0.9 × 0.16 = 0.144 rad: the camera
    /// is there before the stop is seen); with the rate untrailed it ran 0.273 rad past, 0.184 now.
    @Test("the yaw follows a dash and does not run on past where it stopped dead")
    func aDashThatStopsDead() {
        let run = Self.dash(configuration: .tuned)
        let unavoidable = 0.9 * (0.1 + TrackingControlConfiguration.tuned.latency)
        #expect(run.overshoot < unavoidable + 0.05, "overshoot \(run.overshoot * 1000) mrad")
        #expect(abs(run.yaw - 0.9) < 0.0075, "at rest at yaw \(run.yaw)")
    }

    /// The rate a walker's camera leads their detection by is not cut: in the dash's steady middle
    /// the camera keeps up as closely as with the rate untrailed.
    @Test("in the middle of a steady move the yaw keeps up as it does with its rate untrailed")
    func aSteadyMoveKeepsItsLead() {
        var untrailed = TrackingControlConfiguration.tuned
        untrailed.trailing[.yaw] = nil
        let run = Self.dash(configuration: .tuned), before = Self.dash(configuration: untrailed)
        #expect(run.walkError <= before.walkError + 0.001, "mean error \(run.walkError * 1000) mrad in the steady middle, \(before.walkError * 1000) untrailed")
    }

    /// A walker under a real detector's noise (`DetectorJitter`: the filtered target wandering by
    /// ~6 mrad, its rate by ~0.07 rad/s, each detection twice as far off as the filter): the camera
    /// follows at the carried point, the fade's edge, where each frame's jitter cut the rate a
    /// little and the next gave it back. The fade's smoothing keeps the command's RMS jerk at 1.4×
    /// the untrailed yaw's (2.2× without it: 263 against 122 rad/s³).
    @Test("under a detector's jitter a steady walk's yaw fade adds little jerk")
    func aJitteryWalkIsFollowedSmoothly() {
        var untrailed = TrackingControlConfiguration.tuned
        untrailed.trailing[.yaw] = nil
        let run = Self.jitteryWalk(configuration: .tuned), before = Self.jitteryWalk(configuration: untrailed)
        #expect(run.jerk < 1.6 * before.jerk, "the command's RMS jerk \(run.jerk) rad/s³, \(before.jerk) untrailed")
        #expect(run.error <= before.error + 0.001, "mean error \(run.error * 1000) mrad, \(before.error * 1000) untrailed")
    }

    /// A walk at 0.3 rad/s from t = 1 s, seen as in `dash` plus `DetectorJitter`; the command's RMS
    /// jerk (rad/s³) and the camera's mean error from the walker, both after 2 s.
    private static func jitteryWalk(configuration: TrackingControlConfiguration) -> (jerk: Double, error: Double) {
        var controller = TrackingController(configuration: configuration)
        var jitter = DetectorJitter()
        var yaw = 0.0, target: TrackingTarget?, commands: [Double] = [], errors: [Double] = []
        for step in 0..<1000 {
            let now = Double(step) / 100
            if step % 3 == 0 {
                let capture = now - 0.1, walker = max(0, capture - 1) * 0.3, (offset, rate) = jitter.next()
                target = TrackingTarget(yaw: walker + offset, pitch: 0, yawRate: (capture > 1 ? 0.3 : 0) + rate, pitchRate: 0,
                                        time: capture, measuredYaw: walker + 2 * offset, measuredPitch: 0)
            }
            let command = controller.command(target: target, positions: [.yaw: yaw, .pitch: 0], at: now)[.yaw] ?? 0
            yaw += command * 0.01
            guard now >= 2 else { continue }
            commands.append(command)
            errors.append(abs(max(0, now - 1) * 0.3 - yaw))
        }
        var squares = 0.0
        for i in 2..<commands.count {
            let jerk: Double = (commands[i] - 2 * commands[i - 1] + commands[i - 2]) / 0.0001
            squares += jerk * jerk
        }
        let meanError = errors.reduce(0, +) / Double(errors.count)
        return ((squares / Double(commands.count - 2)).squareRoot(), meanError)
    }

    /// The dash: yaw 0.9 t from t = 1 s to 2 s, then still. How far the camera ran past 0.9, where
    /// it ends, and its mean error from the subject over 1.5…1.9 s (the move's steady middle).
    private static func dash(configuration: TrackingControlConfiguration) -> (overshoot: Double, yaw: Double, walkError: Double) {
        func subject(_ t: Double) -> (yaw: Double, rate: Double) {
            t < 1 ? (0, 0) : t < 2 ? (0.9 * (t - 1), 0.9) : (0.9, 0)
        }
        var controller = TrackingController(configuration: configuration)
        var yaw = 0.0, furthest = 0.0, target: TrackingTarget?, errors: [Double] = []
        for step in 0..<500 {
            let now = Double(step) / 100
            if step % 3 == 0 {
                let capture = now - 0.1, rate = subject(capture - 0.15).rate
                let filtered = subject(capture).yaw + 0.05 * (rate - subject(capture).rate)
                target = TrackingTarget(yaw: filtered, pitch: 0, yawRate: rate, pitchRate: 0, time: capture,
                                        measuredYaw: subject(capture).yaw, measuredPitch: 0)
            }
            yaw += (controller.command(target: target, positions: [.yaw: yaw, .pitch: 0], at: now)[.yaw] ?? 0) * 0.01
            furthest = max(furthest, yaw)
            if now >= 1.5 && now < 1.9 { errors.append(abs(subject(now).yaw - yaw)) }
        }
        return (furthest - 0.9, yaw, errors.reduce(0, +) / Double(errors.count))
    }
}
