"""The building blocks of fleet: strategy, role makers, topology, util."""
