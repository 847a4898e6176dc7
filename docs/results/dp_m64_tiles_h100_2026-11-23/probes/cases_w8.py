[("W13 EP8", 64, False, [
   ((32,64,2,None,None),2,True,16,True,True),
   ((32,128,2,None,None),2,True,16,True,True,8),
   ((32,128,2,None,None),2,True,16,False,False,8),
   ((32,128,2,None,None),2,True,None,True,True,8),
   ((32,128,2,80,None),2,True,None,True,True,8),
   ((64,128,2,None,None),2,True,None,True,True,8),
   ((32,128,3,None,None),2,True,None,True,True,8),
   ((64,128,3,None,None),1,True,None,False,False,8),
 ]),
 ("W13 EP8", 128, False, [
   ((64,128,2,None,None),2,True,16,True,True,8),
   ((64,128,3,None,None),1,True,16,False,False,8),
   ((64,128,2,None,None),1,True,16,False,False,8),
 ]),
 ("W13 EP8, TP attention", 256, False, [
   ((32,128,2,None,None),2,True,None,True,True,8),
 ]),
 ("W2 EP8", 64, False, [
   ((64,128,3,None,None),2,True,None,False,False,8),
   ((32,128,3,None,None),2,True,None,False,False,8),
 ]),
]
