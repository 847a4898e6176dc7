[("W13 EP8, TP attention", 96, False, [((16,64,2,None,None),2,True,16,True), ((16,64,3,None,None),2,True,16,True)]),
 ("W13 EP8, TP attention", 128, False, [((16,64,2,None,None),2,True,16,True), ((16,64,3,None,None),2,True,16,True)]),
 ("W13 EP8, TP attention", 160, False, [((16,64,2,None,None),2,True,16,True), ((16,64,3,None,None),2,True,16,True)]),
 ("W13 EP8", 16, False, [((16,64,2,None,None),2,True,16,True), ((16,64,3,None,None),2,True,16,True)]),
]
