[("W13 E128", 192, False, [((32,128,2,None,None),2,None), ((16,128,2,None,3),2,None), ((16,64,2,None,3),4,None)]),
 ("W13 E128", 208, False, [((32,128,2,None,None),2,None), ((16,128,2,None,3),2,None)]),
 ("W13 E128", 224, False, [((32,128,2,None,None),2,None)]),
 ("W13 E128", 256, False, [((32,128,2,None,None),2,None), ((32,128,2,None,3),2,None), ((32,128,2,None,None),4,None)]),
 ("W13 E128", 288, False, [((32,128,2,None,None),2,None)]),
 ("W13 E128", 320, False, [((32,128,2,None,None),2,None)]),
 ("W2 E128", 256, False, [((32,128,2,None,None),2,None), ((32,128,2,None,3),2,None)]),
 ("W13 TP2", 256, False, [((32,128,2,None,None),2,None), ((32,64,2,None,2),4,None)]),
]
