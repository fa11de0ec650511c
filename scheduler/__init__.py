"""Scheduled jobs (cooling-period payouts, deadlines): rebuilt from the event log at start."""
