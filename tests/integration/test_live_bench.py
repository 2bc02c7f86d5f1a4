"""`dock-bench live`: a scene through dock-sim and the real dockd, observations over the socket."""
import json
import subprocess

from conftest import BIN, Client

# One person in front of the stand walks 2.2 m to the left, then 4.4 m to the right, at 2.5 m
# (±41°, past the camera's ±32°), and stays there: only a camera that follows keeps the face in
# the picture.
WALK = {
    "name": "walk-past-the-edges",
    "duration": 10,
    "people": [{"id": 1, "path": [{"t": 0, "x": 0, "z": 2.5}, {"t": 1, "x": 0, "z": 2.5},
                                  {"t": 4, "x": -2.2, "z": 2.5}, {"t": 8, "x": 2.2, "z": 2.5}]}],
    "primary": [{"t": 0, "ids": [1]}],
    "marks": [1, 4, 8],
}


def test_live_run_keeps_the_walker_in_frame_through_dockd(tmp_path):
    scenario = tmp_path / "walk.json"
    scenario.write_text(json.dumps(WALK))
    report = tmp_path / "live.json"
    run = subprocess.run([str(BIN / "dock-bench"), "live", str(scenario), "--binaries", str(BIN), "--json", str(report)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    figures = json.loads(report.read_text())
    assert figures["dockd_serving"], "dockd stopped answering during the run"
    # 30 Hz for 10 s; a loaded machine may skip a few frames or have a burst refused.
    assert figures["frames_sent"] >= 250, figures
    assert sum(figures["refused"].values()) <= 0.05 * figures["frames_sent"], figures["refused"]
    assert figures["motion_reports"] >= 500, "dockd's motion stream at the stand's 100 Hz feedback"
    live = figures["live"]
    assert live["in_frame"] >= 0.9, f"walker in frame {live['in_frame']:.1%} of the time: the stand did not follow"
    assert live["primary_switches"] == 0
    assert "| live |" in run.stdout and "| virtual time |" in run.stdout


def test_with_two_stands_live_needs_stand_and_follows_only_that_one(two_stands, tmp_path):
    """Two stands on the dockd given with --socket: without --stand the run is refused, naming them
    (as dockctl does); with it, only that stand's notifications count (mixed, the motion stream
    counted both stands' reports and the path figures were nonsense)."""
    scenario = tmp_path / "walk.json"
    scenario.write_text(json.dumps({**WALK, "duration": 6}))
    bench = [str(BIN / "dock-bench"), "live", str(scenario), "--socket", two_stands]
    refused = subprocess.run(bench, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 64, refused.stdout + refused.stderr
    assert "2 stands are connected (STAND-A, STAND-B): name one with --stand" in refused.stderr, refused.stderr
    # Every motion.state of each stand while the run goes on, counted by a client of the test's own.
    counter = Client(two_stands)
    counter.result("subscribe", {"topics": ["motion"], "motion_rate": 1000})
    report = tmp_path / "live.json"
    run = subprocess.Popen([*bench, "--stand", "STAND-B", "--json", str(report)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reports = {"STAND-A": 0, "STAND-B": 0}
    while run.poll() is None:
        try:
            message = counter.read_message(0.5)
        except TimeoutError:
            continue
        if message.get("method") == "motion.state":
            reports[message["params"]["stand"]] += 1
    out, err = run.communicate()
    assert run.returncode == 0, out + err
    figures = json.loads(report.read_text())
    assert 0 < figures["motion_reports"] <= reports["STAND-B"], (figures["motion_reports"], reports)
    assert figures["live"]["in_frame"] >= 0.9, figures["live"]


def test_scenario_files_that_are_not_there_are_named_plainly(tmp_path):
    """Run outside the repository, the suite's folder and a scenario file are missing: said as such,
    with where the suite looked, not as a Foundation error's dump."""
    bench = str(BIN / "dock-bench")
    suite = subprocess.run([bench, "scenario", "--suite"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert suite.returncode == 64, suite
    assert "cannot read Benchmarks/Scenarios: No such file or directory" in suite.stderr, suite.stderr
    assert "run it from the repository root or pass --scenarios" in suite.stderr and "CocoaError" not in suite.stderr, suite.stderr
    for command in (["live"], ["scenario"]):
        missing = subprocess.run([bench, *command, "Benchmarks/Scenarios/slow-walk.json"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert missing.returncode == 64, missing
        assert "cannot read Benchmarks/Scenarios/slow-walk.json: No such file or directory" in missing.stderr, missing.stderr
        assert "CocoaError" not in missing.stderr, missing.stderr


def test_a_file_that_is_not_a_scenario_says_where_and_what(tmp_path):
    """A scenario file with a mistake names the field and what is wrong, not a DecodingError's dump."""
    bench = str(BIN / "dock-bench")
    cases = {'{"name": "x", "duration": 5, "people": [{"id": 1, "kind": "cat", "path": []}], "primary": []}':
             "people[0].kind: Cannot initialize Kind from invalid String value cat",
             '{"name": "x", "people": [], "primary": []}': "not a scenario: duration is missing",
             '{"name": "x", "duration": "5", "people": [], "primary": []}': "not a scenario: duration: not a Double",
             '{"name": x': "not a scenario: The given data was not valid JSON."}
    for text, message in cases.items():
        path = tmp_path / "bad.json"
        path.write_text(text)
        for command in ("live", "scenario"):
            done = subprocess.run([bench, command, str(path)], capture_output=True, text=True, timeout=60)
            assert done.returncode == 64 and message in done.stderr, (command, text, done.stderr)
            assert "codingPath" not in done.stderr and "Context(" not in done.stderr, done.stderr
