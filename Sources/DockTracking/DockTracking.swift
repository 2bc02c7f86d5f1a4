// Multi-subject tracker, selection and framing; see Tracker.swift.
