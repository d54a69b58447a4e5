"""The gates, one module each: each reads a proposed call (``Proposal``) or a decision on a
stored one (``Case``) and answers, refusing, holding or settling what it owns. Their order is
``agents.gate._chain``'s; nothing else runs them."""
