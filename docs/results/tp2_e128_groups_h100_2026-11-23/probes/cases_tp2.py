[("W13 TP2", 8, False, [((8,64,2,None,5),2,None), ((8,64,2,None,4),2,None), ((8,64,2,None,6),2,None), ((8,64,3,None,4),2,None)]),
 ("W13 TP2", 128, False, [((16,64,3,None,None),2,None), ((16,64,2,None,None),2,None), ((16,64,2,None,None),4,None), ((16,64,2,None,3),4,None), ((16,64,3,None,3),2,None)]),
 ("W13 TP2", 192, False, [((32,64,2,None,None),2,None), ((32,64,3,None,None),2,None), ((16,64,2,None,None),4,None)]),
 ("W13 TP2", 256, False, [((32,64,2,None,None),2,None), ((32,64,3,None,None),2,None), ((32,64,2,None,3),2,None), ((16,64,2,None,None),4,None), ((32,64,2,None,None),4,None)]),
]
