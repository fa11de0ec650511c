"""Read models and mirrors that follow the event log."""
