[("W2 EP8, TP attention", 64, False, [
   ((16,128,3,None,None),2,True,None,False,False,False,True),
   ((16,128,3,None,None),2,True,None,True,False,False,True),
   ((16,64,3,None,None),2,True,None,True,False,False,True),
   ((8,128,3,None,None),2,True,None,True,False,False,True),
   ((8,64,3,None,None),2,True,None,True,False,False,True),
 ]),
 ("W2 EP8, TP attention", 128, False, [
   ((16,128,3,None,None),2,True,None,False,False,False,True),
   ((16,128,3,None,None),2,True,None,True,False,False,True),
   ((16,64,3,None,None),2,True,None,True,False,False,True),
 ]),
 ("W2 EP8, TP attention", 256, False, [
   ((32,128,3,None,None),2,True,None,False,False,False,True),
   ((32,128,3,None,None),2,True,None,True,False,False,True),
   ((32,64,3,None,None),2,True,None,True,False,False,True),
   ((16,128,3,None,None),2,True,None,True,False,False,True),
 ]),
 ("W2 EP8", 8, False, [
   ((16,128,3,None,None),2,True,None,False,False,False,True),
   ((16,128,3,None,None),2,True,None,True,False,False,True),
   ((16,64,3,None,None),2,True,None,True,False,False,True),
 ]),
 ("W2 EP8", 64, False, [
   ((32,128,3,None,None),2,True,None,True,False,False,True),
 ]),
]
