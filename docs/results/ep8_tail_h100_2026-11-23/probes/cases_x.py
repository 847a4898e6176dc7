[("W13 EP8", 64, False, [((32,64,2,None,None),2,True,16,True), ((64,64,2,None,None),1,True,None,True)]),
 ("W13 EP8, TP attention", 256, False, [((32,64,2,None,None),2,True,None,True)]),
]
