"""The pure room: a race's rules of play as a state machine (`Race`), what each viewer is shown
(`view`), the checklist a move passes, and the TV's pick. No I/O."""
