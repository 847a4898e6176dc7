[("W13 E128", 1, False), ("W13 E128", 8, False), ("W13 E128", 64, False), ("W13 E128", 128, False), ("W13 E128", 256, False),
 ("W2 E128", 1, False), ("W13 TP2", 1, False), ("W13 TP2", 64, False), ("W13 TP2", 128, False), ("W13 TP2", 256, False),
 ("W13 EP8", 1, False), ("W13 EP8", 8, False), ("W13 EP8", 16, False), ("W13 EP8", 32, False), ("W13 EP8", 48, False),
 ("W2 EP8", 8, False), ("W2 EP8", 24, False),
 ("W13 EP8, TP attention", 64, False), ("W13 EP8, TP attention", 128, False), ("W13 EP8, TP attention", 256, False),
 ("W2 EP8, TP attention", 64, False), ("W2 EP8, TP attention", 256, False),
 ("W13 E128", 128, True), ("W13 EP8", 8, True), ("W13 EP8", 32, True), ("W13 TP2", 128, True)]
