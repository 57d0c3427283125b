"""The research loop: routing and clarification, the coordinator and the plan, researching steps,
reflection, the budgets, the language, follow-ups and the clock.
"""
