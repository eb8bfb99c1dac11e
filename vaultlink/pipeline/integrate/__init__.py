"""The integrate step (auto_link): one decision per unit, by a tool session or one
structured answer, through the guard, held for review when uncertain."""
