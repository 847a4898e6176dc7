[("W13 EP8", 32, False, [((32,128,2,None,None),2,None), ((16,128,2,None,None),4,None)]),
 ("W13 EP8", 64, False, [((64,128,2,None,None),2,None), ((32,128,2,None,None),2,None), ((64,128,2,None,None),2,None,16), ((32,128,3,None,None),2,None)]),
 ("W13 EP8", 128, False, [((64,128,2,None,None),2,None,16), ((64,128,2,None,None),2,None)]),
 ("W2 EP8", 64, False, [((64,128,2,None,None),2,None), ((32,128,2,None,None),2,None)]),
 ("W13 EP8", 64, True, [((32,64,2,None,None),2,None), ((32,64,2,None,3),2,None), ((16,64,2,None,2),4,None)]),
]
