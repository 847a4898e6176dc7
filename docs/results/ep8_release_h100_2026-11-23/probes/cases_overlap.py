[("W13 EP8, TP attention", 64, False), ("W13 EP8, TP attention", 128, False), ("W13 EP8, TP attention", 256, False),
 ("W13 EP8", 8, False), ("W13 EP8", 64, False), ("W13 EP8", 128, False),
 ("W2 EP8, TP attention", 128, False), ("W2 EP8", 64, False),
 ("W13 E128", 64, False), ("W13 E128", 256, False), ("W13 TP2", 128, False), ("W2 E128", 128, False),
 ("W13 EP8", 64, True), ("W13 EP8, TP attention", 128, True)]
