// Motion control and animations; see MotionController.swift.
