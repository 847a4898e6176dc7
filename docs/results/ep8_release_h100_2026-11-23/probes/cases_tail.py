[("W13 EP8, TP attention", 256, False, [("rule", True, 16), ("rule", False)]),
 ("W13 EP8, TP attention", 192, False, [("rule", True, 16)]),
 ("W13 EP8", 32, False, [("rule", True, 16)]),
 ("W13 EP8", 24, False, [("rule", True, 16)]),
 ("W13 EP8, TP attention", 128, False, [("rule", True, 16)]),
 ("W13 EP8, TP attention", 64, False, [("rule", True, 16), ((16,64,2,None,3),4,False), ((16,64,2,None,2),4,False)]),
 ("W2 EP8, TP attention", 256, False, [("rule", True, 16)]),
]
