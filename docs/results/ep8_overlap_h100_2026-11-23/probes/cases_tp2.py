[("W13 TP2", 8, False, [
   ((8,64,3,None,5),1,False,None,False,False,True),
   ((8,64,4,None,5),1,False,None,False,False,False),
   ((8,64,2,None,5),1,False,None,False,False,False),
   ((8,64,3,None,4),1,False,None,False,False,False),
   ((8,64,3,None,6),1,False,None,False,False,False),
   ((8,64,4,None,4),1,False,None,False,False,False),
   ((8,64,3,None,None),1,False,None,False,False,False),
   ((8,64,3,None,None),1,False,None,False,False,True),
   ((8,128,3,None,3),1,False,None,False,False,False),
   ((8,64,3,None,5),1,True,None,False,False,False),
 ]),
 ("W2 E128", 8, False, [
   ("rule", False, None, False, False, True),
 ]),
]
