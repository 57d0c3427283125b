"""A research's state and its accounts, under every stage: the state in parts and its two views,
the stage transitions, the token, cost and time budgets, what each model was used for, and the
call policy that charges them. Every stage module writes through these; none of them imports a
stage.
"""
