"""Steering by a person: plan and report reviews, and the critic's refining loop."""
