[("W13 EP8, TP attention", 256, False, [((32,64,2,None,None),2,True,16,True), ((32,64,2,None,None),2,True,16,False)]),
 ("W13 EP8, TP attention", 192, False, [((32,64,2,None,None),2,True,16,True)]),
 ("W13 EP8", 32, False, [((32,64,2,None,None),2,True,16,True)]),
 ("W13 EP8", 24, False, [((32,64,2,None,None),2,True,16,True)]),
]
