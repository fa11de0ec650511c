"""The Code3 domain: aggregates, events, the bounty state machine and value objects. No I/O."""
