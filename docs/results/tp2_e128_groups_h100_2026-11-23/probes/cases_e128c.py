[("W13 E128", 176, False, [((32,128,2,None,None),2,None), ((16,64,2,None,3),4,None)]),
 ("W13 TP2", 176, False, [((32,128,2,None,None),2,None)]),
 ("W13 TP2", 192, False, [((32,128,2,None,None),2,None)]),
 ("W13 TP2", 208, False, [((32,128,2,None,None),2,None)]),
 ("W13 TP2", 224, False, [((32,128,2,None,None),2,None)]),
 ("W13 TP2", 240, False, [((32,128,2,None,None),2,None)]),
 ("W13 TP2", 256, False, [((32,128,2,None,None),2,None)]),
 ("W13 TP2", 288, False, [((32,128,2,None,None),2,None)]),
]
