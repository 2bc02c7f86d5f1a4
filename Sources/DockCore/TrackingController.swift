#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DockProtocol

/// Where the framer wants the camera to point, in the stand's angles (yaw positive left, pitch
/// positive up, rad) plus the base's attitude when it is hand-held (so in the world), how fast that
/// point moves (rad/s), and the host time it refers to (the capture time of the frame it came from).
public struct TrackingTarget: Sendable, Equatable {
    public var yaw: Double
    public var pitch: Double
    public var yawRate: Double
    public var pitchRate: Double
    public var time: Double
    /// The same point where the frame's detection put it, before the tracker's filter. A
    /// constant-velocity filter runs past a face that stops (sit-stand: 20 mrad past for 0.1 s);
    /// the detection does not. nil: the frame did not detect it (`TrackingController`'s trailing
    /// axes then take the filtered point as far off as the last detection had it).
    public var measuredYaw: Double?
    public var measuredPitch: Double?

    public init(yaw: Double, pitch: Double, yawRate: Double = 0, pitchRate: Double = 0, time: Double,
                measuredYaw: Double? = nil, measuredPitch: Double? = nil) {
        self.yaw = yaw; self.pitch = pitch; self.yawRate = yawRate; self.pitchRate = pitchRate; self.time = time
        self.measuredYaw = measuredYaw; self.measuredPitch = measuredPitch
    }
}

/// What the stand does when the subject is gone, after `lostHold` seconds of holding still.
public enum LostSubjectBehaviour: String, Sendable, CaseIterable {
    case hold
    /// A slow yaw sweep around where the subject was last seen.
    case search
    /// Back to the home pose (yaw 0, pitch 0).
    case home
}

/// How a trailing axis's rate fades once the camera is past the point it is judged against: the
/// detection, or the detection carried across the lead (`TrackingControlConfiguration.trailing`,
/// `TrackingController.trailingWeight`).
public struct TrailingFade: Sendable, Equatable {
    /// How far past that point (rad, judged magnified by the zoom like the dead band) the rate
    /// fades out: a blend, not a switch, so the command does not step as the camera crosses a
    /// noisy detection. Wider costs a little error at a stop and saves jerk (BENCHMARKS.md, the
    /// tracking notes). 0: the rate stops counting at the point.
    public var span: Double
    /// Whether the detection is carried forward at the target's rate across the lead before the
    /// camera is judged past it. A camera following a walker rightly leads the detection by the
    /// rate times the lead (the frame's age plus the latency): judged against the detection
    /// itself, the fade would cut a steady walk's rate every frame. Carried, the rate fades only
    /// once the camera is past where the detection, at the rate the filter gives, puts the subject
    /// now: as the filter's rate falls after a subject stopped, the camera still carried on by it
    /// is past that point.
    public var carriedAcrossLead: Bool
    /// Time constant of a low-pass on the fade's weight, s. A steady walk keeps the camera on the
    /// carried point, at the fade's edge, where each frame's jitter cut the rate by a little and
    /// the next gave it back: under a detector's jitter the command's jerk grew two- to threefold
    /// (`aJitteryWalkIsFollowedSmoothly`). 0: none.
    public var smoothing: Double

    public init(span: Double, carriedAcrossLead: Bool, smoothing: Double = 0) {
        self.span = span; self.carriedAcrossLead = carriedAcrossLead; self.smoothing = smoothing
    }
}

public struct TrackingControlConfiguration: Sendable, Equatable {
    /// The settings dockd tracks with, as measured through its engine by `dock-bench scenario`
    /// (BENCHMARKS.md): gain 6/s, prediction across 60 ms of command latency, a 0.015 rad dead band
    /// (averaged over 0.2 s) that settles at 0.003 rad, smoothed target rates and commands,
    /// rates that stop counting once the camera is past the detection (pitch: a posture change —
    /// sit, stand, bend — stops short where no prediction can tell, and the tracker's lagging rate
    /// carried the camera past it) or past the detection carried across the lead (yaw: a walker or
    /// a pet that stops dead, where the same lagging rate ran the camera on), home once there is
    /// no target and the last one is over 1.5 s old. (dockd holds the last
    /// target while the tracker keeps the subject's track: 3 s after it was last seen, up to 6 s
    /// while a nearer person hides it. The target goes only with the track, by then older than
    /// 1.5 s, so in practice the stand holds 3 s, or as long as the subject is hidden, and then
    /// goes home at once.) Against the 0.03 s latency, 0.005 rad settle band and 0.4 s averaging
    /// of the first engine runs: 1.38× → 1.30× the delayed oracle over the suite, the still
    /// subject's error 0.66 → 0.63 %.
    public static let tuned: TrackingControlConfiguration = {
        var c = TrackingControlConfiguration()
        c.gain = 6
        c.latency = 0.06
        c.maximumPrediction = 0.3
        c.deadBand = 0.015
        c.settleBand = 0.003
        c.restSmoothing = 0.2
        c.finishBand = 0.001
        c.finishTime = 0.5
        c.deadBandRate = 0.06
        c.rateSmoothing = 0.08
        c.commandSmoothing = 0.02
        c.lostBehaviour = .home
        c.lostHold = 1.5
        c.trailing = [.pitch: TrailingFade(span: 0.02, carriedAcrossLead: false),
                      .yaw: TrailingFade(span: 0.04, carriedAcrossLead: true, smoothing: 0.02)]
        return c
    }()

    /// Proportional gain on the predicted aim error, 1/s.
    public var gain: Double = 4
    /// The gain times the loop's delay stays under this: a loop closed across a delay τ
    /// rings, then runs away, as gain·τ nears π/2 (a VISCA camera answering 200 ms late lost the
    /// subject half the time at gain 6/s; see HARDWARE.md). A stand on time keeps `gain`.
    public var delayMargin: Double = 0.5
    /// Command-to-motion latency the target is predicted across, s (one feedback period + transport).
    public var latency: Double = 0.03
    /// A target older than this is not extrapolated further, s (a stale subject is not chased).
    public var maximumPrediction: Double = 0.3
    public var lostHold: Double = 1.5
    public var lostBehaviour: LostSubjectBehaviour = .hold
    /// Search amplitude each side of the last seen yaw, rad, and speed, rad/s.
    public var searchAmplitude: Double = 0.6
    public var searchRate: Double = 0.3
    public var homeGain: Double = 1.0
    /// Dead band with hysteresis on the measured error, rad per axis (`AxisDeadBand`): an axis at
    /// rest starts moving once its averaged error (the camera against the target's mean) exceeds
    /// `deadBand` (or its target moves faster than `deadBandRate` and has gone that way) and,
    /// once the averaged error is under `settleBand`, the error now under twice that and the target
    /// slow, finishes its move (`finishBand`) and rests. A still subject with jittery detections thus gets a still camera.
    /// 0 disables it.
    public var deadBand: Double = 0
    public var settleBand: Double = 0
    public var deadBandRate: Double = 0.05
    /// The dead band judges the target's position and rate averaged over this time constant, so detection
    /// noise on a still subject neither restarts the camera nor keeps it from settling; an error of
    /// twice the dead band (a real move) restarts it at once, s.
    public var restSmoothing: Double = 0.4
    /// A move that reaches the settle band is finished, not stopped at its edge: the camera goes
    /// on (P, no rate) to the target's mean as it was then, held, and rests within `finishBand` of
    /// it or after `finishTime` s. A camera closing on a still subject from one side stopped
    /// 2–3 mrad short of it, and stayed there. 0: at rest on entering the settle band.
    public var finishBand: Double = 0
    public var finishTime: Double = 0
    /// Axes whose target's rate (predicted across the lead and fed forward) counts only while the
    /// camera is not past the target as last detected, fading out past it
    /// (`TrackingController.trailingWeight`), and how (`TrailingFade`); none by default.
    public var trailing: [Axis: TrailingFade] = [:]
    /// Fraction of the target's rate fed forward (1 = all of it).
    public var feedforwardGain: Double = 1
    /// Time constant of the low-pass on the target's rate, s: the rate comes from a filter fed by
    /// jittery detections at 10–30 Hz, and each new frame would otherwise step the command. 0 = off.
    public var rateSmoothing: Double = 0
    /// Time constant of the low-pass on the commanded rate, s (smooths the steps a new target
    /// causes between frames, at the cost of lag). 0 = off.
    public var commandSmoothing: Double = 0

    public init() {}
}

/// Turns a tracking target into per-axis velocity commands for `MotionController.setVelocity`:
/// feedforward of the target's angular velocity, prediction across the control latency, and
/// proportional feedback on the remaining error measured from the motors' feedback plus the base's
/// attitude, whose rate is fed back negated so a hand-held base's sway never reaches the camera.
/// The MotionController clamps the result to the limits and the acceleration.
public struct TrackingController: Sendable {
    public var configuration: TrackingControlConfiguration
    /// Axes that turn without end (a continuous yaw): home on them is the nearest whole turn.
    public var continuousAxes: Set<Axis> = []
    /// The loop's delay, s: the link's measured round trip plus the stand's feedback period (the
    /// engine's `loopDelay`); above `delayMargin / gain` it lowers the gain.
    public var loopDelay = 0.0
    /// The camera's zoom (1: the field of view the dead band is set for). The dead band judges
    /// errors and rates magnified by it, so that it stays the same part of the frame: at 10× a
    /// fixed 0.015 rad band is a fifth of the frame's height, and a tight shot lost its subject
    /// inside it.
    public var magnification = 1.0
    private var lastTarget: TrackingTarget?
    private var searchDirection = 1.0
    private var smoothedRate: (yaw: Double, pitch: Double)?
    private var lastCommand: (yaw: Double, pitch: Double, time: Double)?
    private var rest = (yaw: AxisDeadBand(), pitch: AxisDeadBand())
    private var lastCommandTime: Double?
    /// Per trailing axis, where the last detection put the target against the filter's estimate,
    /// and the capture time of that detection (`trailingWeight`): replaced by the next detection,
    /// unused once over `maximumPrediction` old, and forgotten at a jump. Jumps are told by the
    /// dead band (three dead bands are their scale), so without one (`deadBand` 0, which no
    /// shipped setting pairs with a trailing axis) an offset counts across a jump until then.
    private var detectedOffset: [Axis: (offset: Double, time: Double)] = [:]
    /// Per axis whose fade is smoothed (`TrailingFade.smoothing`), the weight it last gave;
    /// forgotten with the subject and at a jump.
    private var fadeWeight: [Axis: Double] = [:]

    public init(configuration: TrackingControlConfiguration = .init()) {
        self.configuration = configuration
    }

    /// Rates for the axes present in `positions` (yaw and pitch, motor angles), given the latest
    /// target (nil when no subject is tracked) and the base's attitude now (`.level` on a desk).
    public mutating func command(target: TrackingTarget?, positions: [Axis: Double], base: BaseAttitude = .level,
                                 at now: Double) -> [Axis: Double] {
        let c = configuration
        if let target {
            // Smooth the target's rate across new targets (a new capture time is a new frame).
            if let previous = lastTarget, target.time > previous.time, let rate = smoothedRate, c.rateSmoothing > 0 {
                let w = 1 - exp(-(target.time - previous.time) / c.rateSmoothing)
                smoothedRate = (rate.yaw + (target.yawRate - rate.yaw) * w, rate.pitch + (target.pitchRate - rate.pitch) * w)
            } else if lastTarget == nil || smoothedRate == nil || c.rateSmoothing <= 0 || target.time != lastTarget!.time {
                smoothedRate = (target.yawRate, target.pitchRate)
            }
            lastTarget = target
            // A stale target (the subject unseen for longer than the prediction horizon) is held,
            // not chased: no feedforward, no extrapolation.
            let age = max(0, now - target.time)
            let rate = age > c.maximumPrediction ? (yaw: 0.0, pitch: 0.0) : smoothedRate!
            let lead = min(c.maximumPrediction, age) + c.latency
            let dt = lastCommandTime.map { min(max(0, now - $0), 0.1) } ?? 0
            lastCommandTime = now
            var rates: [Axis: Double] = [:]
            if let yaw = positions[.yaw] {
                let camera = yaw + base.yaw + base.yawRate * c.latency
                let jumped = rest.yaw.judge(target: target.yaw, time: target.time, magnification: magnification, configuration: c)
                let weight = trailingWeight(.yaw, target: target.yaw, measured: target.measuredYaw, jumped: jumped, rate: rate.yaw, camera: camera, time: target.time, lead: lead, dt: dt)
                rates[.yaw] = axisRate(target: target.yaw, jumped: jumped, rate: rate.yaw, weight: weight, lead: lead, camera: camera,
                                       baseRate: base.yawRate, dt: dt, rest: &rest.yaw, partnerMoving: rest.pitch.moving && rest.pitch.finishing == nil)
            }
            if let pitch = positions[.pitch] {
                let camera = pitch + base.pitch + base.pitchRate * c.latency
                let jumped = rest.pitch.judge(target: target.pitch, time: target.time, magnification: magnification, configuration: c)
                let weight = trailingWeight(.pitch, target: target.pitch, measured: target.measuredPitch, jumped: jumped, rate: rate.pitch, camera: camera, time: target.time, lead: lead, dt: dt)
                rates[.pitch] = axisRate(target: target.pitch, jumped: jumped, rate: rate.pitch, weight: weight, lead: lead, camera: camera,
                                         baseRate: base.pitchRate, dt: dt, rest: &rest.pitch, partnerMoving: rest.yaw.moving && rest.yaw.finishing == nil)
            }
            // Both axes moving and both on target: the camera finishes its move as a whole.
            if rest.yaw.moving && rest.pitch.moving && rest.yaw.onTarget && rest.pitch.onTarget {
                rest.yaw.settle(configuration: c)
                rest.pitch.settle(configuration: c)
            }
            // At rest on both axes with a still base: exactly zero, and the smoothing starts afresh
            // (its decay would otherwise trickle ever smaller commands).
            if !rest.yaw.moving && !rest.pitch.moving && base.yawRate == 0 && base.pitchRate == 0 && c.deadBand > 0 {
                lastCommand = nil
                return rates.mapValues { _ in 0 }
            }
            return smooth(rates, at: now)
        }
        smoothedRate = nil
        rest = (AxisDeadBand(), AxisDeadBand())
        detectedOffset = [:]
        fadeWeight = [:]
        lastCommand = nil
        return lostCommand(positions: positions, at: now)
    }

    /// Forgets the subject (tracking turned off, camera flipped).
    public mutating func reset() {
        lastTarget = nil
        smoothedRate = nil
        lastCommand = nil
        rest = (AxisDeadBand(), AxisDeadBand())
        detectedOffset = [:]
        fadeWeight = [:]
    }

    /// Whether the camera is being moved onto the target (outside the dead band) on some axis.
    public var isRecentering: Bool { rest.yaw.moving || rest.pitch.moving }

    /// The share of the target's rate (predicted across the lead and fed forward) an axis counts: 1,
    /// but on a trailing axis only while the camera is behind the target as detected, fading out
    /// past it: a move that ends where nobody can predict (a person sitting down) is followed once,
    /// not run past its end on the tracker's lagging rate. A frame that did not detect the target
    /// (`measured` nil) has only the filter's estimate, which runs on past a face that stopped:
    /// it is taken as far off the target as the last detection (up to `maximumPrediction` old) put
    /// it. Taken as is, sit-stand at seed 2 (the face missed on the two frames after the sit-down,
    /// the filter 7 mrad past the last detection and running on) got the full rate back and ran
    /// the camera 53 mrad past the face; the last detection alone, a frame old, lags a face still
    /// moving. Where the axis's rule carries the detection across the lead (`TrailingFade`), the
    /// camera is judged against that point, the rate times `lead` on; where it smooths the weight,
    /// over `dt`, the time since the last command. `jumped`: the dead band judged this update's
    /// target a jump (`AxisDeadBand.judge`).
    private mutating func trailingWeight(_ axis: Axis, target: Double, measured: Double?, jumped: Bool, rate: Double, camera: Double, time: Double, lead: Double, dt: Double) -> Double {
        let c = configuration
        guard let rule = c.trailing[axis] else { return 1 }
        var point = target
        if jumped { fadeWeight[axis] = nil }
        if let measured {
            detectedOffset[axis] = (measured - target, time)
            point = measured
        } else if jumped {
            // The offset was of the subject framed then, where it was then: not across a jump.
            detectedOffset[axis] = nil
        } else if let detected = detectedOffset[axis], time - detected.time <= c.maximumPrediction {
            point = target + detected.offset
        }
        if rule.carriedAcrossLead { point += rate * lead }
        let past = max(0, (camera - point) * (rate > 0 ? 1 : rate < 0 ? -1 : 0)) * magnification
        let weight = rule.span > 0 ? max(0, 1 - past / rule.span) : (past > 0 ? 0 : 1)
        guard rule.smoothing > 0 else { return weight }
        let smoothed = fadeWeight[axis].map { $0 + (weight - $0) * (1 - exp(-dt / rule.smoothing)) } ?? weight
        fadeWeight[axis] = smoothed
        return smoothed
    }

    /// Feedforward of `weight` of the target's rate plus P on the error predicted `lead` seconds
    /// ahead, inside the dead band's hysteresis. The camera's angle is the motor's plus the base's
    /// (predicted across the command latency); the base's rate is cancelled even inside the dead
    /// band, where the camera should stay still in the world, not on the swaying base.
    private func axisRate(target: Double, jumped: Bool, rate: Double, weight: Double, lead: Double, camera: Double, baseRate: Double, dt: Double,
                          rest: inout AxisDeadBand, partnerMoving: Bool) -> Double {
        let c = configuration
        let error = target + rate * lead * weight - camera
        if c.deadBand > 0 {
            // Whether to move is judged on the error as measured, not as predicted: a rate from
            // jittery detections times the lead (0.1–0.4 s) is noise enough to restart the camera on
            // a still subject, and to keep it from settling. Once moving, the prediction steers.
            rest.update(target: target, jumped: jumped, camera: camera, rate: rate, magnification: magnification, partnerMoving: partnerMoving, dt: dt, configuration: c)
            if !rest.moving { return -baseRate }
        }
        let gain = loopDelay > 0 ? min(c.gain, c.delayMargin / loopDelay) : c.gain
        if let goal = rest.finishing?.goal { return gain * (goal - camera) - baseRate }
        return c.feedforwardGain * weight * rate - baseRate + gain * error
    }

    private mutating func smooth(_ rates: [Axis: Double], at now: Double) -> [Axis: Double] {
        let tau = configuration.commandSmoothing
        guard tau > 0 else { return rates }
        let yaw = rates[.yaw] ?? 0, pitch = rates[.pitch] ?? 0
        var out = rates
        if let last = lastCommand, now > last.time {
            let w = 1 - exp(-(now - last.time) / tau)
            let y = last.yaw + (yaw - last.yaw) * w, p = last.pitch + (pitch - last.pitch) * w
            if rates[.yaw] != nil { out[.yaw] = y }
            if rates[.pitch] != nil { out[.pitch] = p }
            lastCommand = (y, p, now)
        } else {
            lastCommand = (yaw, pitch, now)
        }
        return out
    }

    private mutating func lostCommand(positions: [Axis: Double], at now: Double) -> [Axis: Double] {
        let c = configuration
        let still = positions.mapValues { _ in 0.0 }
        guard let last = lastTarget, now - last.time > c.lostHold else { return still }
        switch c.lostBehaviour {
        case .hold:
            return still
        case .home:
            // By the shortest way: a continuous axis that has turned 1.1 turns goes back 0.1 turn,
            // not 1.1.
            return Dictionary(uniqueKeysWithValues: positions.map { axis, position in
                (axis, -c.homeGain * (continuousAxes.contains(axis) ? remainder(position, 2 * .pi) : position))
            })
        case .search:
            guard let yaw = positions[.yaw] else { return still }
            if yaw > last.yaw + c.searchAmplitude { searchDirection = -1 }
            if yaw < last.yaw - c.searchAmplitude { searchDirection = 1 }
            var rates = still
            rates[.yaw] = searchDirection * c.searchRate
            return rates
        }
    }
}

/// The dead band of one axis, in angle and time. The target's position and rate are averaged over
/// `restSmoothing` throughout: a detector's jitter on a still subject moves the measured target by
/// several mrad from frame to frame and the rate the tracker estimates from it by 0.1 rad/s, so no
/// single frame decides (a jump starts the average afresh). The averaged error is the camera now against the target's mean (an
/// average of the error itself would average the camera's own recent positions too, and read near
/// zero while a camera sweeping across its target was still well off it: seed 3's
/// `still-subject-noisy` came to rest 14 mrad off its subject that way and moved again half a
/// second later). At rest, the axis starts moving once the averaged error leaves `deadBand` (at
/// once when the error is twice that), or once the averaged rate leaves `deadBandRate` and the
/// averaged error confirms it (at least half the dead band, the same way): a rate without a
/// displacement is noise. Moving, it comes back to rest once the averaged error is under
/// `settleBand`, the error now under twice that and the averaged rate under `deadBandRate`: the
/// camera is on the target's mean, which a detector's noise seldom lets the instantaneous error
/// show; it then finishes the move on that mean, held (`finishing`), and rests. The camera moves or rests as a whole: while the other axis (`partnerMoving`) moves, this
/// one follows any averaged error past `settleBand` and settles only with it, since a correction
/// during a move shows no more than the move (a person walking across drifts in pitch as their
/// distance changes: held in the dead band, the drift grew to the band's edge, and the pitch
/// settled on a target still moving).
struct AxisDeadBand: Sendable {
    /// Moving onto the target, or finishing a move (`finishing`): either way commanded.
    private(set) var moving = false
    /// The point a move that has reached the settle band ends on: the target's mean when it did,
    /// held, so the detector's noise can neither stop the camera at the band's edge nor keep it
    /// hunting a band tighter than that noise (coming to rest within half the band under noise
    /// moved seed 3's `still-subject-noisy` camera 7.7 % of its still time). The mean starts afresh
    /// when the target jumps: averaged across a reacquisition, it was still 2.9 mrad back towards
    /// where the subject had been hidden when `occlusion-2s`'s camera (seed 1) reached the settle
    /// band on the subject, and the camera went back there, a second into the pause. nil: not finishing.
    private(set) var finishing: (goal: Double, since: Double)?
    /// On the target's mean as of the last update (where a moving axis may come to rest).
    private(set) var onTarget = false
    /// The target's mean and its rate's, in angles (rad, rad/s; `update`).
    private var averaged: (target: Double, rate: Double)?
    private var clock = 0.0
    /// The capture time of the last detection judged for a jump.
    private var judgedTime: Double?

    /// Whether a new detection's target jumped: the subject found again where it went while hidden,
    /// another subject framed. Such a target starts the mean afresh: a mean still partly of where
    /// the subject was is no place to finish a move on. Judged once per detection (capture `time`),
    /// against the target's mean, magnified: a jump when the target is over three dead bands behind
    /// the mean (against the mean's rate), or ahead of it by over three dead bands past the lag a
    /// move at the mean's rate puts between a target and its mean (the rate times the averaging's
    /// time constant, plus a detection period for a target held between frames, ≤
    /// `maximumPrediction`). The lag lies ahead only (averaged over the same time constant, the
    /// target and its rate keep the target that rate's lag ahead, through a gentle turn too):
    /// counted both sides, a jump back against a fast move was not seen (at 0.5 rad/s, 0.16 rad
    /// either side); counted ahead it widens the margin there and never shifts it, so a noisy rate
    /// cannot make a jump. A sharp turn back, the tracker's rate turning after the subject, puts
    /// the target behind until the rate turns: at 4× one to three detections after the turn are
    /// judged jumps (0.1–0.5 rad/s, the rate 0.1–0.2 s late; at 1× one, at 0.5 rad/s and 0.2 s).
    /// Harmless: a moving axis's commands do not read the judgement (the same yaw path with the
    /// rule switched off, traced with and without jitter, when yaw did not trail), and the mean it
    /// restarts is on the subject. A trailing axis reads it on a frame without a detection, where
    /// it then judges the camera against the filter's estimate instead of the last detection's
    /// offset from it, and on every frame to restart its fade's smoothing (`TrailingFade`): at a
    /// turn back with yaw trailing, a change in the command's jerk of 0.02 % (a review's port of
    /// the controller, a 1 rad/s turn).
    /// Its size is bounded by the time only: under a fixed bound, every frame of a steady move
    /// faster than it would be judged a jump. A detector's jitter stays within its own size of
    /// the mean, at any zoom and frame rate; judged against the last detection plus its rate times
    /// the time since, as before, the difference of two frames' jitter plus the rate's noise times
    /// the period counted: at 4× a ±6 mrad jitter (24 magnified) restarted the mean on most
    /// frames, and the camera moved on noise.
    private func jumped(to target: Double, time: Double, magnification: Double, configuration c: TrackingControlConfiguration) -> Bool {
        guard let judgedTime, time > judgedTime, let mean = averaged else { return false }
        let rate = mean.rate * magnification
        let ahead = (target - mean.target) * magnification * (rate < 0 ? -1 : 1)
        let lag = abs(rate) * (c.restSmoothing + min(time - judgedTime, c.maximumPrediction))
        return ahead > 3 * c.deadBand + lag || ahead < -3 * c.deadBand
    }

    /// Judges the target for a jump (`jumped(to:)`) and keeps its capture time, so that a detection
    /// is judged once however many updates hold it; the judgement is for this update (`update`) and
    /// for a trailing axis's detection offset (`TrackingController.trailingWeight`).
    mutating func judge(target: Double, time: Double, magnification: Double, configuration c: TrackingControlConfiguration) -> Bool {
        let jumped = jumped(to: target, time: time, magnification: magnification, configuration: c)
        if judgedTime.map({ time > $0 }) ?? true { judgedTime = time }
        return jumped
    }

    /// Errors and rates are judged magnified by the zoom (`TrackingController.magnification`); the
    /// target's mean and its rate are kept in angles (rad, rad/s), so that a zoom neither moves the
    /// mean nor leaves its rate in the last zoom's units (kept magnified, a zoom from 1× to 4×
    /// left the rate a quarter of the walk's: the lag allowed was too, and a steady walk's next
    /// detection was judged a jump). `jumped`: this update's
    /// judgement (`judge`), which starts the mean afresh.
    mutating func update(target: Double, jumped: Bool, camera: Double, rate: Double, magnification: Double, partnerMoving: Bool, dt: Double,
                         configuration c: TrackingControlConfiguration) {
        clock += dt
        let w = c.restSmoothing > 0 ? 1 - exp(-dt / c.restSmoothing) : 1
        let mean: (target: Double, rate: Double) = jumped ? (target, rate)
            : averaged.map { ($0.target + (target - $0.target) * w, $0.rate + (rate - $0.rate) * w) } ?? (target, rate)
        averaged = mean
        let average = (error: (mean.target - camera) * magnification, rate: mean.rate * magnification)
        let error = (target - camera) * magnification
        // The error now within twice the settle band too: the mean of a target still drifting
        // slowly away lags it, and a camera on that mean is behind the subject (`held-selection`
        // came to rest 11 mrad off a subject who stopped there).
        onTarget = abs(average.rate) <= c.deadBandRate && abs(average.error) < c.settleBand && abs(error) < 2 * c.settleBand
        if let finish = finishing {
            // The move ends on its goal (or after `finishTime`, whatever the noise), unless the
            // subject moves off meanwhile.
            if abs(error) > 2 * c.deadBand || abs(average.error) > c.deadBand {
                finishing = nil
            } else if abs(finish.goal - camera) * magnification <= c.finishBand || clock - finish.since >= c.finishTime {
                finishing = nil
                moving = false
            }
            return
        }
        if moving {
            if onTarget && !partnerMoving { settle(configuration: c) }
            return
        }
        let rateConfirmed = abs(average.rate) > c.deadBandRate && average.error * average.rate > 0 && abs(average.error) > c.deadBand / 2
        let followsPartner = partnerMoving && abs(average.error) > c.settleBand
        if abs(average.error) > c.deadBand || abs(error) > 2 * c.deadBand || rateConfirmed || followsPartner { moving = true }
    }

    /// From moving to finishing the move on the target's mean (at rest at once without `finishTime`).
    mutating func settle(configuration c: TrackingControlConfiguration) {
        guard moving, finishing == nil else { return }
        guard c.finishTime > 0, let mean = averaged else { moving = false; return }
        finishing = (mean.target, clock)
    }
}
