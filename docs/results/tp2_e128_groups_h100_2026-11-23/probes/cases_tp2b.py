[("W13 TP2", 96, False, [((16,64,2,None,3),4,None), ((8,64,2,None,3),4,None), ((16,64,2,None,None),4,None)]),
 ("W13 TP2", 128, False, [((16,64,2,None,3),4,None), ((16,64,2,None,4),4,None), ((16,64,2,None,2),4,None), ((16,64,3,None,3),4,None), ((8,64,2,None,3),4,None), ((16,64,2,None,3),2,None)]),
 ("W13 TP2", 160, False, [((16,64,2,None,3),4,None), ((32,64,2,None,3),4,None), ((32,64,2,None,None),2,None), ((16,64,2,None,None),4,None)]),
 ("W13 TP2", 192, False, [((16,64,2,None,3),4,None), ((32,64,2,None,3),4,None), ((32,64,2,None,2),4,None), ((32,64,2,None,None),2,None)]),
 ("W13 TP2", 256, False, [((16,64,2,None,3),4,None), ((32,64,2,None,3),4,None), ((32,64,2,None,2),4,None), ((32,64,2,None,2),2,None), ((32,64,2,None,None),2,None)]),
 ("W13 E128", 128, False, [((16,64,2,None,3),4,None), ((8,64,2,None,3),4,None), ((16,64,2,None,None),4,None)]),
 ("W13 E128", 256, False, [((32,64,2,None,3),4,None), ((16,64,2,None,3),4,None), ((32,64,2,None,None),2,None)]),
]
