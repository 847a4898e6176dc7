[("W13 TP2", 8, False, [((8,64,3,None,4),1,None), ((8,64,3,None,6),1,None), ((8,64,4,None,5),1,None), ((8,64,3,None,5),1,True), ((8,128,3,None,3),1,None), ((8,64,2,None,5),1,None)]),
 ("W2 E128", 8, False, [((8,128,3,None,4),1,None), ((8,64,3,None,4),1,None), ((8,128,4,None,3),1,None), ((8,128,2,None,4),1,None)]),
]
