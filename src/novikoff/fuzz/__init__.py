"""Fuzzing: the catalogue of buggy perceptrons and the driver behind `novikoff fuzz`."""
