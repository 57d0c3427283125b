"""The research loop: the request decoded, routing and clarification, the coordinator and the
plan, researching steps (the literature's too), reflection, and the steps a person approved.
"""
