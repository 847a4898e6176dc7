[("W13 E128", 192, False, [((16,64,2,None,2),4,None), ((16,64,3,None,2),4,None), ((16,128,2,None,3),2,None), ((16,128,3,128,None),2,None)]),
 ("W13 E128", 256, False, [((32,128,2,None,None),2,None), ((32,128,3,128,None),2,None), ((16,128,2,None,3),2,None), ((32,64,3,None,2),4,None)]),
 ("W13 E128", 224, True, [((16,64,2,None,2),4,None), ((32,64,2,None,2),4,None)]),
 ("W13 E128", 256, True, [((16,64,2,None,2),4,None), ((32,64,2,None,2),4,None), ((32,64,3,128,None),2,None)]),
 ("W13 TP2", 256, True, [((32,64,3,None,None),2,None), ((16,64,3,None,2),4,None)]),
]
