[("W13 TP2", 96, True, [((16,64,2,None,2),4,None), ((16,64,2,None,2),2,None), ((16,64,3,None,2),2,None), ((16,64,2,None,3),4,None), ((8,64,3,None,3),2,None)]),
 ("W13 TP2", 128, True, [((16,64,2,None,2),4,None), ((16,64,2,None,2),2,None), ((16,64,3,None,2),2,None), ((16,64,2,None,3),4,None), ((8,64,3,None,3),2,None)]),
 ("W13 TP2", 192, True, [((16,64,2,None,2),4,None), ((16,64,2,None,2),2,None), ((16,64,2,None,3),4,None)]),
 ("W13 TP2", 256, True, [((32,64,2,None,2),4,None), ((16,64,2,None,2),4,None), ((32,64,2,None,2),2,None), ((16,64,2,None,3),4,None)]),
 ("W13 E128", 128, True, [((16,64,2,None,2),4,None), ((16,64,2,None,3),4,None), ((16,64,2,None,2),2,None)]),
 ("W13 E128", 96, True, [((16,64,2,None,2),4,None), ((16,64,2,None,3),4,None)]),
]
