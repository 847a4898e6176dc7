[("W13 EP8", 1, False, [("rule", True)]), ("W13 EP8", 2, False, [("rule", True)]),
 ("W13 EP8", 3, False, [("rule", True)]), ("W2 EP8", 1, False, [("rule", True)]),
 ("W2 EP8", 2, False, [("rule", True)]), ("W13 EP8", 1, True, [("rule", True)]),
 ("W13 EP8, TP attention", 8, False, [("rule", True)]), ("W13 EP8, TP attention", 16, False, [("rule", True)])]
