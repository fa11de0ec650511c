"""The bounty lifecycle's domain: the contract's rules and terms, the Bounty, Issue, Spec and AccountLink aggregates,
their lookups, the code3/v1 metadata block, identity-link statements and amounts for people."""
