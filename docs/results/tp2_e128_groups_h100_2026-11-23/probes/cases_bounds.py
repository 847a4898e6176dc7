[("W13 TP2", 160, True, [((16,64,2,None,2),4,None)]),
 ("W13 TP2", 80, True, [((16,64,2,None,2),4,None)]),
 ("W13 E128", 160, True, [((16,64,2,None,2),4,None)]),
 ("W13 E128", 192, True, [((16,64,2,None,2),4,None)]),
 ("W13 E128", 80, True, [((16,64,2,None,2),4,None)]),
 ("W13 E128", 80, False, [((16,64,2,None,3),4,None)]),
 ("W13 TP2", 64, False, [((16,64,2,None,3),4,None)]),
 ("W13 TP2", 64, True, [((16,64,2,None,2),4,None)]),
]
