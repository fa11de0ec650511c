"""Read models of the bounty lifecycle: the bounty board, its outcome sums and its completion prefixes."""
