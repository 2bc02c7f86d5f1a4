import FuzzSupport

runLibFuzzer()
