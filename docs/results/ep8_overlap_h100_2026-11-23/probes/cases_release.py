[("W2 EP8, TP attention", 8, False, [
   ("rule", 2), ("rule", 2, None, True), ("rule", False, None, True),
 ]),
 ("W2 EP8, TP attention", 64, False, [
   ("rule", True, None, True), ("rule", 2), ("rule", 2, None, True),
   ((16,128,4,None,None),2,True,None,True), ((16,128,4,None,None),2,2,None,True),
 ]),
 ("W2 EP8, TP attention", 128, False, [
   ("rule", True, None, True), ("rule", 2), ("rule", 2, None, True),
   ((16,128,4,None,None),2,True,None,True), ((16,128,4,None,None),2,2,None,True),
 ]),
 ("W2 EP8, TP attention", 256, False, [
   ("rule", True, None, True), ("rule", 2), ("rule", 2, None, True),
 ]),
 ("W2 EP8", 8, False, [
   ("rule", True, None, True), ("rule", 2), ("rule", 2, None, True),
   ((16,128,4,None,None),2,True,None,True), ((16,128,4,None,None),2,2,None,True),
 ]),
 ("W2 EP8", 64, False, [
   ("rule", True, None, True), ("rule", 2), ("rule", 2, None, True),
 ]),
 ("W13 EP8, TP attention", 64, False, [
   ("rule", 2, None, True),
 ]),
 ("W13 EP8", 64, False, [
   ("rule", 2, None, True),
 ]),
]
